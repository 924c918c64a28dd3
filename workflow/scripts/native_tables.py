from toolgate.native import write_native_tables
from toolgate.smk import logged

with logged(snakemake):
    p, i, o = snakemake.params, snakemake.input, snakemake.output
    write_native_tables(i.catalog, i.utterances, i.lexical, i.deployments, i.records, o.deployment, o.calls,
                        tuple(p.langs), p.seed)
