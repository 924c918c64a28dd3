from toolgate.ablation import write_ablation
from toolgate.smk import logged

with logged(snakemake):
    p, o = snakemake.params, snakemake.output
    write_ablation(snakemake.input.catalog, snakemake.input.utterances, dict(zip(p.rankers, snakemake.input.scores)),
                   p.lexical, p.encoders, o.table, o.crossover, p.ablation["ks"], p.ablation["seeds"], p.seed,
                   tuple(p.langs))
