from toolgate.experiment import Experiment
from toolgate.router.evaluation import write_router_eval
from toolgate.smk import logged

with logged(snakemake):
    write_router_eval(Experiment.from_snakemake(snakemake, {**snakemake.params.settings,
                                                            "external": snakemake.params.external}))
