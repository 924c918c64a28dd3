from toolgate.smk import logged, typed
from toolgate.gate.subtype import write_gate_by_subtype

with logged(snakemake):
    p, i = typed(snakemake.params), snakemake.input
    write_gate_by_subtype(i.catalog, i.utterances, i.signals, snakemake.output[0], p.signals, p.gate, p.run)
