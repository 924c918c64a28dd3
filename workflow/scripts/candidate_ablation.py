from toolgate.retrieval.ablation import write_ablation
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_ablation(i.catalog, i.utterances, dict(zip(p.rankers, i.scores)), p.rankers, p.roles, o,
                   p.ablation, p.run)
