from toolgate.experiment import Experiment
from toolgate.native.tables import write_native_tables
from toolgate.smk import logged

with logged(snakemake):
    write_native_tables(Experiment.from_snakemake(snakemake))
