from toolgate.gate.bootstrap import write_bootstrap
from toolgate.smk import logged, typed

with logged(snakemake):
    p = typed(snakemake.params)
    write_bootstrap(snakemake.input.signals, snakemake.output.table, p.roles, p.gate, p.run.seed)
