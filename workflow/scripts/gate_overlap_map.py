from toolgate.gate.overlap import write_gate_overlap_map
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i = typed(snakemake.params), snakemake.input
    write_gate_overlap_map(i.catalog, i.utterances, i.signals, snakemake.output.table, p.signals, p.gate, p.run)
