from toolgate.experiment import Experiment
from toolgate.gate.overlap import write_gate_by_overlap
from toolgate.smk import logged

with logged(snakemake):
    write_gate_by_overlap(Experiment.from_snakemake(snakemake))
