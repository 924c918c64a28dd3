from toolgate.routing.baselines import Study, write_baselines
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    study = Study(p.run, p.gate, p.routing, p.signals)
    write_baselines(i.catalog, i.utterances, i.lexical, i.signals, o[0], study)
