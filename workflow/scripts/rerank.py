from toolgate.retrieval.rerank import write_rerank
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_rerank(i.catalog, i.utterances, i.lexical, dict(zip(p.rerankers, i.rerankers)), o[0], p.top_k, p.run)
