from toolgate.report.plots import fig_jaccard
from toolgate.smk import logged

with logged(snakemake):
    fig_jaccard(snakemake.input.table, snakemake.output.png[: -len(".png")])
