from toolgate.gate.operating import write_operating_points
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_operating_points(i.catalog, i.utterances, i.lexical, i.signals, o, p.signals,
                           p.gate.danger_budget, p.run)
