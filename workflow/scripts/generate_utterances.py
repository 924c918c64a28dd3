from toolgate.data.generate import generate_files
from toolgate.experiment import Experiment
from toolgate.smk import logged

with logged(snakemake):
    generate_files(Experiment.from_snakemake(snakemake))
