from toolgate.router.export import export_router
from toolgate.routing.baselines import Study
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i = typed(snakemake.params), snakemake.input
    export_router(i, dict(zip(p.rankers, i.scores)), p.out_dir,
                  snakemake.wildcards.pipeline, p.rankers, Study(p.run, p.gate, p.routing, p.signals), p.provenance,
                  force=True)  # snakemake removed the declared outputs; anything else left there is kept, never overwritten
