from toolgate.native.tournament_run import write_tournament
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_tournament(i.catalog, i.utterances, (o.records, o.deployment, snakemake.log.server, o.table), p.run,
                     p.native, p.tournament)
