from toolgate.check import run_check
from toolgate.smk import logged

with logged(snakemake):
    if not run_check(snakemake.params.tables, snakemake.input.expected, snakemake.output[0]):
        raise SystemExit(f"headline numbers differ from {snakemake.input.expected}; see {snakemake.log[0]}")
