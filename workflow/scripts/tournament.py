from types import SimpleNamespace

from toolgate.experiment import typed
from toolgate.native.tournament_run import write_tournament
from toolgate.smk import logged

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    outputs = SimpleNamespace(records=o.records, deployment=o.deployment, server_log=snakemake.log.server, table=o.table)
    write_tournament(i.catalog, i.utterances, outputs, p.run, p.native, p.tournament)
