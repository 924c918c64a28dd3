from toolgate.core.rankers import RankerSpec
from toolgate.core.scores import compute_scores
from toolgate.experiment import Experiment
from toolgate.retrieval.hybrid import compute_hybrid_scores
from toolgate.smk import logged

with logged(snakemake):
    exp = Experiment.from_snakemake(snakemake)
    if RankerSpec.of(exp.spec).hybrid:  # fused from its members' score matrices
        compute_hybrid_scores(exp)
    else:
        compute_scores(exp)
