from toolgate.gate.loco import write_gate_loco
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_gate_loco(i.signals, i.external[0] if i.external else None, o.table, p.signals, p.experiment, p.gate, p.run)
