from toolgate.experiment import Experiment
from toolgate.gate.reliability import write_calibration
from toolgate.smk import logged

with logged(snakemake):
    write_calibration(Experiment.from_snakemake(snakemake))
