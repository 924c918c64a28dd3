from toolgate.experiment import Experiment
from toolgate.router.embedded import write_embedded
from toolgate.smk import logged

with logged(snakemake):
    write_embedded(Experiment.from_snakemake(snakemake))
