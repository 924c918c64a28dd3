from toolgate.experiment import Experiment
from toolgate.routing.baselines import write_baselines
from toolgate.smk import logged

with logged(snakemake):
    write_baselines(Experiment.from_snakemake(snakemake))
