from toolgate.experiment import Experiment
from toolgate.gate.comparison import write_gate_comparison
from toolgate.smk import logged

with logged(snakemake):
    write_gate_comparison(Experiment.from_snakemake(snakemake))
