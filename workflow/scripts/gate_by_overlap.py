from toolgate.gate.overlap import write_gate_by_overlap
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i = typed(snakemake.params), snakemake.input
    write_gate_by_overlap(i.catalog, i.utterances, i.signals, dict(zip(p.rankers, i.scores)), snakemake.output.table,
                          p.signals, p.gate, p.run)
