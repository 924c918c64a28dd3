from toolgate.data.card import write_data_card
from toolgate.smk import logged, typed

with logged(snakemake):
    p, o = typed(snakemake.params), snakemake.output
    write_data_card(snakemake.input.catalog, snakemake.input.utterances, o,
                    p.examples, p.utterances, p.run)
