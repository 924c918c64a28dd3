from toolgate.gate.comparison import write_gate_comparison
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_gate_comparison(i.catalog, i.utterances, i.lexical, i.signals, o.table, p.signals, p.gate, p.run)
