from toolgate.external.experiment import write_functionchat_experiment
from toolgate.smk import logged, typed

with logged(snakemake):
    p, o = typed(snakemake.params), snakemake.output
    write_functionchat_experiment(o.catalog, o.utterances, o.meta, p.seed, p.external)
