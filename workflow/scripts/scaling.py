from toolgate.bench.scaling import write_scaling
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_scaling(i.catalog, i.utterances, p.rankers, p.lexical, o.table, p.run, p.scaling, p.external)
