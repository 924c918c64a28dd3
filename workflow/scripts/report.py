from toolgate.experiment import Experiment
from toolgate.report.build import write_report
from toolgate.smk import logged

with logged(snakemake):
    write_report(Experiment.from_snakemake(snakemake))
