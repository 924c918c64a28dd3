from toolgate.experiment import Experiment
from toolgate.gate.operating import write_operating_points
from toolgate.smk import logged

with logged(snakemake):
    write_operating_points(Experiment.from_snakemake(snakemake))
