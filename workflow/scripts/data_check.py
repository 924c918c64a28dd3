from toolgate.data.check import write_data_check
from toolgate.smk import logged, typed

with logged(snakemake):
    p = typed(snakemake.params)
    write_data_check(snakemake.input.catalog, snakemake.input.utterances, p.annotations, snakemake.output.report,
                     p.data_check, p.run)
