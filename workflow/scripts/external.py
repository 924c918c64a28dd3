from toolgate.external import write_external
from toolgate.smk import logged

with logged(snakemake):
    p, i, o, e, g = snakemake.params, snakemake.input, snakemake.output, snakemake.params.external, snakemake.params.gate
    write_external(i.catalog, i.utterances, i.g3, p.rankers, o.selection, o.gate, o.jaccard, o.jaccard_items, e["mirror"] or None,
                   p.cache, e["bfcl_limit"], g["top_k"], g["folds"], g["resamples"], p.seed, p.text["ngram"],
                   p.text["pad"], tuple(p.langs))
