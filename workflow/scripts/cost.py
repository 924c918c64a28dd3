from toolgate.bench.cost import write_cost
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_cost(i.catalog, i.utterances, p.rankers, p.lexical, o, p.run, p.cost)
