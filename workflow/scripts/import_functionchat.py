from toolgate.external import write_functionchat_experiment
from toolgate.smk import logged

with logged(snakemake):
    o = snakemake.output
    write_functionchat_experiment(o.catalog, o.utterances, o.meta, snakemake.params.seed, snakemake.params.mirror or None)
