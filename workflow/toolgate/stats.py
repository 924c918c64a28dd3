"""The statistics every study shares: cluster-bootstrap resampling and intervals, and grouped folds.

A resample draws clusters with replacement and weights every item by how often its cluster was drawn; every signal,
pipeline or candidate of a table is evaluated on the same resamples (paired). Folds keep a group (a request and its
translation, a set's cluster) on one side and the in-catalog share level across folds.
"""
from __future__ import annotations

import functools

import numpy as np

from .metrics import weighted_auc


def cluster_weights(clusters: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples x n_items) weights: the number of draws of each item's cluster, as floats (the AUC, FPR and
    sweep computations work in float; whole counts are exact, and so are their sums, in any order). The same (clusters,
    n_resamples, seed) gives the same array, drawn once (read-only: callers share it)."""
    return _drawn(tuple(np.asarray(clusters).tolist()), n_resamples, seed)


# the last few draws: a table asks for the same resamples once per signal, pipeline or candidate
@functools.lru_cache(maxsize=4)
def _drawn(clusters: tuple, n_resamples: int, seed: int) -> np.ndarray:
    labels, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(len(labels), np.full(len(labels), 1 / len(labels)), size=n_resamples)
    w = counts[:, inverse].astype(float)
    w.flags.writeable = False
    return w


def percentile_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The central ``level`` percentile interval of resampled values (NaN resamples ignored)."""
    lo, hi = np.nanquantile(values, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


def resampled_means(values: dict[str, np.ndarray], clusters: np.ndarray, n_resamples: int,
                    seed: int) -> dict[str, np.ndarray]:
    """Each array's mean on the same cluster-bootstrap resamples: (n_resamples,) per name, paired across names."""
    # the draw counts as integers, as the means were always computed: with float weights numpy's product takes BLAS's
    # summation order, which moves the last bits of a mean of fractional values (make bench's share over seeds)
    w = cluster_weights(clusters, n_resamples, seed).astype(np.int64)
    return {name: w @ v / w.sum(1) for name, v in values.items()}


def auc_interval(scores: np.ndarray, y: np.ndarray, weights: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """(AUC, interval low, interval high): the point AUC and the percentile interval over the weight rows."""
    scores = np.asarray(scores, float)
    return float(weighted_auc(scores, y, np.ones(len(y)))), *percentile_interval(weighted_auc(scores, y, weights), level)


def folds(y: np.ndarray, groups: np.ndarray, n_splits: int, seed: int):
    from sklearn.model_selection import StratifiedGroupKFold

    return list(StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed).split(np.zeros(len(y)), y, groups))


def main_folds(y: np.ndarray, groups: np.ndarray, hard: np.ndarray, n_splits: int, seed: int):
    """Folds fitted on the main set; mismatch_hard rows are only ever predicted, each pair in one fold."""
    main, extra = np.flatnonzero(~hard), np.flatnonzero(hard)
    fold_of = {p: i % n_splits for i, p in enumerate(sorted(set(groups[extra])))}
    extra_fold = np.array([fold_of[g] for g in groups[extra]], int)
    return [(main[train], np.sort(np.r_[main[test], extra[extra_fold == f]]))
            for f, (train, test) in enumerate(folds(y[main], groups[main], n_splits, seed))]
