from toolgate.bench.tokenizer_ablation import write_tokenizer_ablation
from toolgate.experiment import Experiment
from toolgate.smk import logged

with logged(snakemake):
    write_tokenizer_ablation(Experiment.from_snakemake(snakemake))
