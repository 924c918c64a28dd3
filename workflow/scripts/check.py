from toolgate.experiment import typed
from toolgate.report.check import run_check
from toolgate.smk import logged

with logged(snakemake):
    p = typed(snakemake.params)
    if not run_check(p.tables, snakemake.input.expected, p.roles, snakemake.output.report):
        raise SystemExit(f"headline numbers differ from {snakemake.input.expected}; see {snakemake.log[0]}")
