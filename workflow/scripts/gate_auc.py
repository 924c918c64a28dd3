from toolgate.gate.study import load_study, write_gate_auc, write_signals
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    study = load_study(i.catalog, i.utterances, dict(zip(p.rankers, i.scores)), p.specs, p.roles, p.gate, p.run)
    write_signals(study, o.signals)
    write_gate_auc(study, o.table, o.payload, o.gates)
