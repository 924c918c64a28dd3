from toolgate.experiment import Experiment
from toolgate.router.evaluation import write_leakage
from toolgate.smk import logged

with logged(snakemake):
    write_leakage(Experiment.from_snakemake(snakemake, snakemake.params.settings))
