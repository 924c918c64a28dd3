from toolgate.selection import write_selection
from toolgate.smk import logged

with logged(snakemake):
    p = snakemake.params
    write_selection(snakemake.input.catalog, snakemake.input.utterances, dict(zip(p.rankers, snakemake.input.scores)),
                    snakemake.output[0], p.top_k, tuple(p.langs), p.seed)
