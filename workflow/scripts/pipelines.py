from toolgate.routing.baselines import Study
from toolgate.routing.pipelines import write_pipelines
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_pipelines(i, dict(zip(p.rankers, i.scores)), o, p.rankers, p.lexical, Study(p.run, p.gate, p.routing, p.signals), p.cost)
