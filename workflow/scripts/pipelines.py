from toolgate.experiment import Experiment
from toolgate.routing.pipelines import write_pipelines
from toolgate.smk import logged

with logged(snakemake):
    write_pipelines(Experiment.from_snakemake(snakemake))
