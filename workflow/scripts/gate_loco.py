from toolgate.experiment import Experiment
from toolgate.gate.loco import write_gate_loco
from toolgate.smk import logged

with logged(snakemake):
    write_gate_loco(Experiment.from_snakemake(snakemake))
