from toolgate.experiment import Experiment
from toolgate.router.loco import write_router_loco
from toolgate.smk import logged

with logged(snakemake):
    write_router_loco(Experiment.from_snakemake(snakemake, {**snakemake.params.settings,
                                                            "external": snakemake.params.external}))
