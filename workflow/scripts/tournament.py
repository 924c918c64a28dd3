from toolgate.experiment import Experiment
from toolgate.native.tournament_run import write_tournament
from toolgate.smk import logged

with logged(snakemake):
    write_tournament(Experiment.from_snakemake(snakemake), snakemake.log.server)
