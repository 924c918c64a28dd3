from toolgate.experiment import typed
from toolgate.report.overlap_map import fig_gate_overlap_map
from toolgate.smk import logged

with logged(snakemake):
    p = typed(snakemake.params)
    fig_gate_overlap_map(snakemake.input.table, snakemake.output.png[: -len(".png")], p.signals)
