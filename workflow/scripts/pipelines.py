from toolgate.routing.pipelines import write_pipelines
from toolgate.routing.baselines import Study
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_pipelines((i.catalog, i.utterances, i.signals), dict(zip(p.rankers, i.scores)),
                    (o.table, o.diversity, o.cost), p.rankers, p.lexical, Study(p.run, p.gate, p.routing, p.signals), p.cost)
