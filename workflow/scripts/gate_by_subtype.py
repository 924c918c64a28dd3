from toolgate.experiment import Experiment
from toolgate.gate.subtype import write_gate_by_subtype
from toolgate.smk import logged

with logged(snakemake):
    write_gate_by_subtype(Experiment.from_snakemake(snakemake))
