from toolgate.experiment import Experiment
from toolgate.gate.bootstrap import write_bootstrap
from toolgate.smk import logged

with logged(snakemake):
    write_bootstrap(Experiment.from_snakemake(snakemake))
