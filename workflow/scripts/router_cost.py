from toolgate.experiment import Experiment
from toolgate.router.cost import write_router_cost
from toolgate.smk import logged

with logged(snakemake):
    write_router_cost(Experiment.from_snakemake(snakemake))
