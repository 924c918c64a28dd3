from toolgate.experiment import typed
from toolgate.report.plots import fig_gate_transfer
from toolgate.smk import logged

with logged(snakemake):
    p = typed(snakemake.params)
    fig_gate_transfer(snakemake.input.table, snakemake.output.png[: -len(".png")], p.signals, p.own)
