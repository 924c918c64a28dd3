from toolgate.core.mood import MOOD_C, MOOD_SEED
from toolgate.router.mood import write_mood_table
from toolgate.smk import logged

with logged(snakemake):
    write_mood_table(snakemake.input.bank, snakemake.output.table, MOOD_SEED, MOOD_C)
