from toolgate.data.generate import generate_files
from toolgate.smk import logged, typed

with logged(snakemake):
    p = typed(snakemake.params)
    generate_files(snakemake.input.catalog, p.templates, p.composition, p.run,
                   snakemake.output)
