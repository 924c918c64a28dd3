from toolgate.bench.tokenizer_ablation import write_tokenizer_ablation
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i = typed(snakemake.params), snakemake.input
    write_tokenizer_ablation(i.catalog, i.utterances, p.spec, snakemake.output.table, p.run, p.tokenizer_ablation)
