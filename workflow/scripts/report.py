from toolgate.report.build import write_report
from toolgate.smk import logged

with logged(snakemake):
    p, i = snakemake.params, snakemake.input
    write_report(p.experiment, p.tables, p.figures, i, p.config, snakemake.output.md,
                 snakemake.output.html)
