from toolgate.gate import load_study, write_gate_auc, write_signals
from toolgate.smk import logged

with logged(snakemake):
    p, i, o = snakemake.params, snakemake.input, snakemake.output
    study = load_study(i.catalog, i.utterances, i.lexical, dict(zip(p.encoders, i.encoders)), p.gate["top_k"],
                       p.gate["folds"], p.seed, p.text["ngram"], p.text["pad"], tuple(p.langs))
    write_signals(study, o.signals)
    write_gate_auc(study, o.table, o.payload, p.seed)
