from toolgate.gate.transfer import write_gate_transfer
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    external = i.external[0] if i.external else None
    write_gate_transfer(i.signals, external, o.table, p.signals, p.experiment, p.gate, p.run)
