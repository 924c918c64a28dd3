from toolgate.plots import fig_operating_points
from toolgate.smk import logged

with logged(snakemake):
    fig_operating_points(snakemake.input.curves, snakemake.input.points, snakemake.output.png[: -len(".png")])
