from toolgate.experiment import Experiment
from toolgate.external.experiment import write_functionchat_experiment
from toolgate.smk import logged

with logged(snakemake):
    write_functionchat_experiment(Experiment.from_snakemake(snakemake))
