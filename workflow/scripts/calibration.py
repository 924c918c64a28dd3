from toolgate.gate.reliability import write_calibration
from toolgate.smk import logged, typed

with logged(snakemake):
    p, o = typed(snakemake.params), snakemake.output
    write_calibration(snakemake.input.signals, o, p.signals, p.gate.calibration_bins, p.run.seed)
