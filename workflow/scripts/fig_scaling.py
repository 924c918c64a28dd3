from toolgate.report.plots import fig_scaling
from toolgate.smk import logged

with logged(snakemake):
    fig_scaling(snakemake.input.table, snakemake.output.png[: -len(".png")])
