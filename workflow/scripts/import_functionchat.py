from toolgate.experiment import Experiment
from toolgate.external.experiment import write_source_experiment
from toolgate.smk import logged

with logged(snakemake):
    write_source_experiment(Experiment.from_snakemake(snakemake), "functionchat")
