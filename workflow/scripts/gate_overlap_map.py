from toolgate.experiment import Experiment
from toolgate.gate.overlap import write_gate_overlap_map
from toolgate.smk import logged

with logged(snakemake):
    write_gate_overlap_map(Experiment.from_snakemake(snakemake))
