from toolgate.external.study import write_external
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_external(i.catalog, i.utterances, i.gates, o,
                   p.rankers, p.run, p.gate, p.external, p.roles)
