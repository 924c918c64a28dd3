from toolgate.io import validate_files
from toolgate.smk import logged

with logged(snakemake):
    validate_files(snakemake.input.catalog, snakemake.input.utterances, snakemake.output[0], tuple(snakemake.params.langs))
