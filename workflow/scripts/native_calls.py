from types import SimpleNamespace

from toolgate.native.run import write_native_calls
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_native_calls(i.catalog, i.utterances, i.lexical, snakemake.wildcards.checkpoint, p.entry,
                       SimpleNamespace(records=o.records, deployment=o.deployment, server_log=snakemake.log.server),
                       p.run, p.native)
