from toolgate.plots import fig_reliability
from toolgate.smk import logged

with logged(snakemake):
    fig_reliability(snakemake.input[0], snakemake.output.png[: -len(".png")])
