from toolgate.selection import compute_scores
from toolgate.smk import logged

with logged(snakemake):
    p = snakemake.params
    compute_scores(snakemake.input.catalog, snakemake.input.utterances, p.spec, snakemake.output[0],
                   tuple(p.langs), p.text["ngram"], p.text["pad"], p.cache)
