from toolgate.experiment import Experiment
from toolgate.gate.study import write_gate_auc
from toolgate.smk import logged

with logged(snakemake):
    write_gate_auc(Experiment.from_snakemake(snakemake))
