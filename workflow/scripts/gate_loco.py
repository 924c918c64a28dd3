from toolgate.gate.loco import write_gate_loco
from toolgate.smk import logged, typed

with logged(snakemake):
    p = typed(snakemake.params)
    write_gate_loco(snakemake.input, snakemake.output.table, p.signals, p.own, p.gate, p.run)
