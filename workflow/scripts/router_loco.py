from toolgate.config import section
from toolgate.router.loco import write_router_loco
from toolgate.routing.baselines import Study
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, ext = typed(snakemake.params.settings), snakemake.input, snakemake.params.external
    write_router_loco(i, dict(zip(p.rankers, i.scores)), snakemake.output.table, p.rankers,
                      Study(p.run, p.gate, p.routing, p.signals), p.provenance, p.router, ext and section("external", ext))
