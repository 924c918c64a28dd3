from toolgate.scores import compute_scores
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    compute_scores(i.catalog, i.utterances, p.spec, o[0], p.run)
