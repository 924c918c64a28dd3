from toolgate.report.plots import fig_reliability
from toolgate.smk import logged, typed

with logged(snakemake):
    p = typed(snakemake.params)
    fig_reliability(snakemake.input.table, snakemake.output.png[: -len(".png")], p.signals)
