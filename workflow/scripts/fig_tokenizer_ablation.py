from toolgate.report.plots import fig_tokenizer_ablation
from toolgate.smk import logged

with logged(snakemake):
    fig_tokenizer_ablation(snakemake.input.table, snakemake.output.png[: -len(".png")])
