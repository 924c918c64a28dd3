from toolgate.rerank import write_rerank
from toolgate.smk import logged

with logged(snakemake):
    p, i = snakemake.params, snakemake.input
    write_rerank(i.catalog, i.utterances, i.lexical, dict(zip(p.rerankers, i.rerankers)), snakemake.output[0],
                 p.top_k, tuple(p.langs), p.seed)
