from toolgate.config import section
from toolgate.router.evaluation import write_router_eval
from toolgate.routing.baselines import Study
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, ext = typed(snakemake.params.settings), snakemake.input, snakemake.params.external
    write_router_eval(i, dict(zip(p.rankers, i.scores)), snakemake.output.table, Study(p.run, p.gate, p.routing,
                      p.signals), p.provenance["lexical"], ext and section("external", ext))
