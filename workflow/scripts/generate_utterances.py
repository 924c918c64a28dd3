from toolgate.data import generate_files
from toolgate.smk import logged

with logged(snakemake):
    p = snakemake.params
    generate_files(snakemake.input.catalog, p.templates, p.composition, p.seed,
                   snakemake.output.utterances, snakemake.output.meta, tuple(p.langs))
