from toolgate.router.mood import write_kiwi_agreement
from toolgate.smk import logged

with logged(snakemake):
    write_kiwi_agreement(snakemake.input.bank, snakemake.input.utterances, snakemake.output.table)
