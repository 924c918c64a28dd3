from toolgate.report.plots import fig_candidate_ablation
from toolgate.smk import logged

with logged(snakemake):
    fig_candidate_ablation(snakemake.input.table, snakemake.output.png[: -len(".png")])
