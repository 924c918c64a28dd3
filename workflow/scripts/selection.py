from toolgate.retrieval.selection import write_selection
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_selection(i.catalog, i.utterances, dict(zip(p.rankers, i.scores)), o[0], p.top_k, p.run)
