from toolgate.router.cost import write_router_cost
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i = typed(snakemake.params), snakemake.input
    write_router_cost(i.routers, i.catalog, i.utterances, snakemake.output.table, p.router, p.run)
