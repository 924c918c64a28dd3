from toolgate.gate.subtype import write_gate_by_subtype
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i = typed(snakemake.params), snakemake.input
    write_gate_by_subtype(i.catalog, i.utterances, i.signals, snakemake.output.table, p.signals, p.gate, p.run)
