from toolgate.routing import write_pipelines
from toolgate.smk import logged

with logged(snakemake):
    p, i, o, r = snakemake.params, snakemake.input, snakemake.output, snakemake.params.routing
    write_pipelines(i.catalog, i.utterances, dict(zip(p.rankers, i.scores)), p.lexical, i.signals, o.table,
                    o.diversity, o.cost, r["pipelines"], p.rankers, r["fidelities"], p.gate["danger_budget"], r["ask_cap"],
                    r["band_top"], r["grid"], p.gate["resamples"], p.seed, tuple(p.langs), p.text["ngram"],
                    p.text["pad"], p.cost["queries"], p.cost["warmup"])
