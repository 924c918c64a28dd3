from toolgate.experiment import Experiment
from toolgate.retrieval.quant import write_retention
from toolgate.smk import logged

with logged(snakemake):
    write_retention(Experiment.from_snakemake(snakemake))
