from toolgate.routing import write_baselines
from toolgate.smk import logged

with logged(snakemake):
    p, i = snakemake.params, snakemake.input
    write_baselines(i.catalog, i.utterances, i.lexical, i.signals, snakemake.output[0], p.routing["gate"], p.budget,
                    p.routing["grid"], p.resamples, p.seed, tuple(p.langs))
