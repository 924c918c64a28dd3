from toolgate.experiment import Experiment
from toolgate.router.ablation import write_examples_ablation
from toolgate.smk import logged

with logged(snakemake):
    write_examples_ablation(Experiment.from_snakemake(snakemake, snakemake.params.settings))
