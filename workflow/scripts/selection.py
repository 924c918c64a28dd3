from toolgate.experiment import Experiment
from toolgate.retrieval.selection import write_selection
from toolgate.smk import logged

with logged(snakemake):
    write_selection(Experiment.from_snakemake(snakemake))
