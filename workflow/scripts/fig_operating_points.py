from toolgate.experiment import typed
from toolgate.report.plots import fig_operating_points
from toolgate.smk import logged

with logged(snakemake):
    p = typed(snakemake.params)
    fig_operating_points(snakemake.input.curves, snakemake.input.points, snakemake.output.png[: -len(".png")], p.signals)
