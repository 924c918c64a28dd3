from toolgate.experiment import Experiment
from toolgate.router.product import export_selected
from toolgate.smk import logged

with logged(snakemake):
    export_selected(Experiment.from_snakemake(snakemake, snakemake.params.settings), snakemake.params.out_dir,
                    snakemake.output.table, force=True)  # snakemake removed the declared outputs
