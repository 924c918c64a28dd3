from toolgate.bench.scaling import write_scaling
from toolgate.experiment import Experiment
from toolgate.smk import logged

with logged(snakemake):
    write_scaling(Experiment.from_snakemake(snakemake))
