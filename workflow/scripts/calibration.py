from toolgate.calibration import write_calibration
from toolgate.smk import logged

with logged(snakemake):
    p, o = snakemake.params, snakemake.output
    write_calibration(snakemake.input[0], o.table, o.curves, p.gates, p.bins, p.seed)
