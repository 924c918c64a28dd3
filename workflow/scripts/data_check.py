from toolgate.data.check import write_data_check
from toolgate.experiment import Experiment
from toolgate.smk import logged

with logged(snakemake):
    write_data_check(Experiment.from_snakemake(snakemake))
