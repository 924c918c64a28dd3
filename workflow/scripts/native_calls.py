from toolgate.experiment import Experiment
from toolgate.native.run import write_native_calls
from toolgate.smk import logged

with logged(snakemake):
    write_native_calls(Experiment.from_snakemake(snakemake), snakemake.wildcards.checkpoint, snakemake.log.server)
