from toolgate.experiment import Experiment
from toolgate.external.study import write_external
from toolgate.smk import logged

with logged(snakemake):
    write_external(Experiment.from_snakemake(snakemake))
