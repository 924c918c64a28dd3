from toolgate.retrieval.hybrid import compute_hybrid_scores
from toolgate.retrieval.rankers import RankerSpec
from toolgate.retrieval.scores import compute_scores
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    if RankerSpec.of(p.spec).hybrid:  # fused from its members' score matrices
        compute_hybrid_scores(i.catalog, i.utterances, p.spec, i.members, o[0], p.run)
    else:
        compute_scores(i.catalog, i.utterances, p.spec, o[0], p.run)
