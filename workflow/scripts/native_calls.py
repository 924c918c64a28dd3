from toolgate.native import write_native_calls
from toolgate.smk import logged

with logged(snakemake):
    p, i, o, w = snakemake.params, snakemake.input, snakemake.output, snakemake.wildcards
    write_native_calls(i.catalog, i.utterances, i.lexical, w.checkpoint, p.entry, p.conditions, o.records, o.deployment,
                       snakemake.log.server, p.endpoint, p.concurrency, p.readiness_timeout_s, p.request_timeout_s,
                       p.tool_language, tuple(p.langs))
