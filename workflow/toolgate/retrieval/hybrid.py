"""Hybrid rankers: convex weights fitted out of fold and score files fused, per request (``rrf`` or ``convex``).

The arithmetic and the in-memory ranker are :mod:`toolgate.core.fusion` (numpy only, for the router);
docs/metrics.md, 'Hybrid rankers', defines both.
"""
from __future__ import annotations

import logging

import numpy as np

from ..core.fusion import combine, convex
from ..core.scores import Scores, gold_rank, load_scores, save_scores
from ..stats import main_folds
from ..utterances import is_in_catalog

log = logging.getLogger(__name__)
GRID = np.round(np.linspace(0.0, 1.0, 21), 2)  # convex weights tried on each training part


def best_weight(a: np.ndarray, b: np.ndarray, gold: np.ndarray) -> float:
    """The grid weight with the best top-1 on rows with a gold column (then MRR, then the smaller weight)."""
    def key(w):
        r = gold_rank(convex(a, b, w), gold)
        return (r == 1).mean(), (1.0 / r).mean()
    scores = [key(w) for w in GRID]
    return float(GRID[max(range(len(GRID)), key=lambda i: (scores[i], -i))])


def oof_weights(a: np.ndarray, b: np.ndarray, rows: list[dict], action_ids, folds: int, seed: int) -> np.ndarray:
    """One convex weight per row, chosen on the training part of the row's fold (in-catalog main rows only)."""
    y = np.array([is_in_catalog(r["gold_outcome"]) for r in rows], int)
    groups = np.array([r["pair_id"] for r in rows])
    hard = np.array([r["slice"] == "mismatch_hard" for r in rows])
    col = {t: j for j, t in enumerate(action_ids)}
    gold = np.array([col.get(r["gold_tool"], -1) for r in rows])
    w = np.full(len(rows), np.nan)
    for i, (train, test) in enumerate(main_folds(y, groups, hard, folds, seed)):
        fit = train[gold[train] >= 0]
        w[test] = best_weight(a[fit], b[fit], gold[fit])
        log.info("convex fold %d: w = %.2f (first member), chosen on %d requests", i, w[test][0], len(fit))
    return w


def fuse(members: list[Scores], rows: list[dict], spec: dict, seed: int) -> Scores:
    """The hybrid's scores for ``rows``: members fused over each row's visible actions; routes ``-inf``."""
    aligned = [m.for_rows(rows) for m in members]
    first = aligned[0]
    if any(list(m.tool_ids) != list(first.tool_ids) for m in aligned):
        raise ValueError(f"hybrid members {spec['members']} score different catalogs")
    acts = [m.action_scores() for m in aligned]
    weight = (oof_weights(acts[0], acts[1], rows, first.action_ids, spec["folds"], seed)
              if spec["method"] == "convex" else None)
    fused = combine(acts, spec["method"], spec["rrf_k"], weight)
    matrix = np.full(first.matrix.shape, -np.inf)
    matrix[:, first.actions] = fused
    return Scores(first.utterance_ids, first.tool_ids, first.kinds, matrix)


def compute_hybrid_scores(exp) -> Scores:
    """``exp.spec``: the hybrid's config entry, fused from ``exp.input.members`` (its members' score matrices)."""
    s = fuse([load_scores(p) for p in exp.input.members], exp.rows, exp.spec, exp.seed)
    save_scores(exp.output[0], s)
    return s
