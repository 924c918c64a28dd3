from toolgate.operating import write_operating_points
from toolgate.smk import logged

with logged(snakemake):
    p, i, o = snakemake.params, snakemake.input, snakemake.output
    write_operating_points(i.catalog, i.utterances, i.lexical, i.signals, o.table, o.curves, p.gates, p.budget,
                           tuple(p.langs), p.seed)
