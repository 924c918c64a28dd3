from toolgate.bench.cost import write_pipeline_cost
from toolgate.experiment import Experiment
from toolgate.smk import logged

with logged(snakemake):
    write_pipeline_cost(Experiment.from_snakemake(snakemake))
