from toolgate.experiment import typed
from toolgate.smk import logged
from toolgate.utterances import validate_files

with logged(snakemake):
    p = typed(snakemake.params)
    validate_files(snakemake.input.catalog, snakemake.input.utterances, snakemake.output.marker, p.run.langs)
