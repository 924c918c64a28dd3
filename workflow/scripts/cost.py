from toolgate.cost import write_cost
from toolgate.smk import logged

with logged(snakemake):
    p, o = snakemake.params, snakemake.output
    write_cost(snakemake.input.catalog, snakemake.input.utterances, p.rankers, p.lexical, o.table, o.index,
               tuple(p.langs), p.text["ngram"], p.text["pad"], p.cost["queries"], p.cost["warmup"], p.seed)
