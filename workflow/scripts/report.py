from toolgate.report.build import write_report
from toolgate.smk import logged

with logged(snakemake):
    p = snakemake.params
    write_report(p.experiment, p.tables, p.figures, snakemake.input.reported, p.config, snakemake.output.md,
                 snakemake.output.html)
