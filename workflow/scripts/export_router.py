from toolgate.experiment import Experiment
from toolgate.router.export import export_router, pipeline_route
from toolgate.smk import logged

with logged(snakemake):
    exp = Experiment.from_snakemake(snakemake, snakemake.params.settings)
    export_router(exp, pipeline_route(snakemake.wildcards.pipeline, exp), snakemake.params.out_dir,
                  force=True)  # snakemake removed the declared outputs; anything else left there is kept, never overwritten
