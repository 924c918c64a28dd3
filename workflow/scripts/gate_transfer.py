from toolgate.experiment import Experiment
from toolgate.gate.transfer import write_gate_transfer
from toolgate.smk import logged

with logged(snakemake):
    write_gate_transfer(Experiment.from_snakemake(snakemake))
