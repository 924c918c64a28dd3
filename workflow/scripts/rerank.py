from toolgate.experiment import Experiment
from toolgate.retrieval.rerank import write_rerank
from toolgate.smk import logged

with logged(snakemake):
    write_rerank(Experiment.from_snakemake(snakemake))
