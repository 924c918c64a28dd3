from toolgate.experiment import typed
from toolgate.io import validate_files
from toolgate.smk import logged

with logged(snakemake):
    p = typed(snakemake.params)
    validate_files(snakemake.input.catalog, snakemake.input.utterances, snakemake.output.marker, p.run.langs)
