from toolgate.native.tables import write_native_tables
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_native_tables(i.catalog, i.utterances, i.lexical, i.deployments, i.records, o.deployment, o.calls, p.run)
