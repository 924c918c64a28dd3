from toolgate.router.export import export_router, pipeline_route
from toolgate.routing.baselines import Study
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i = typed(snakemake.params.settings), snakemake.input
    study = Study(p.run, p.gate, p.routing, p.signals)
    export_router(i, dict(zip(p.rankers, i.scores)), snakemake.params.out_dir,
                  pipeline_route(snakemake.wildcards.pipeline, study), p.rankers, study, p.provenance,
                  force=True)  # snakemake removed the declared outputs; anything else left there is kept, never overwritten
