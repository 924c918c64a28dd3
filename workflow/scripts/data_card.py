from toolgate.data.card import write_data_card
from toolgate.experiment import Experiment
from toolgate.smk import logged

with logged(snakemake):
    write_data_card(Experiment.from_snakemake(snakemake))
