from toolgate.router.product import export_selected
from toolgate.routing.baselines import Study
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i = typed(snakemake.params.settings), snakemake.input
    export_selected(i, dict(zip(p.rankers, i.scores)), snakemake.params.out_dir, p.rankers,
                    Study(p.run, p.gate, p.routing, p.signals), p.provenance, p.router, snakemake.output.table,
                    force=True)  # snakemake removed the declared outputs
