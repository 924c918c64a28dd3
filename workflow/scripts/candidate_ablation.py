from toolgate.experiment import Experiment
from toolgate.retrieval.ablation import write_ablation
from toolgate.smk import logged

with logged(snakemake):
    write_ablation(Experiment.from_snakemake(snakemake))
