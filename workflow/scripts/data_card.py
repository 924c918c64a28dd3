from toolgate.datacard import write_data_card
from toolgate.smk import logged

with logged(snakemake):
    p, o = snakemake.params, snakemake.output
    write_data_card(snakemake.input.catalog, snakemake.input.utterances, o.card, o.composition, o.jaccard,
                    ngram=p.ngram, examples=p.examples, seed=p.seed, langs=tuple(p.langs))
