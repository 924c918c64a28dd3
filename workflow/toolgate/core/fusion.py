"""Hybrid fusion arithmetic (:mod:`toolgate.retrieval.hybrid` explains the methods) and the in-memory hybrid ranker.

numpy only: :mod:`toolgate.core.rankers` builds a hybrid from fitted members without reading score matrices, and
:mod:`toolgate.retrieval.hybrid` fuses the members' score files with the same functions.
"""
from __future__ import annotations

import numpy as np


def ranks(matrix: np.ndarray) -> np.ndarray:
    """1-based rank of every column per row: 1 + the number of strictly higher scores (a tie shares its best
    rank); ``-inf`` columns rank after all finite ones. scipy's ``rankdata(-matrix, method="min", axis=1)``
    (a test checks it), without importing scipy.stats, which costs every benchmark child most of a second."""
    m = np.asarray(matrix, float)
    order = np.argsort(-m, axis=1, kind="stable")
    desc = np.take_along_axis(m, order, 1)
    new = np.ones(m.shape, bool)
    new[:, 1:] = desc[:, 1:] != desc[:, :-1]  # where a run of tied scores starts
    first = np.maximum.accumulate(np.where(new, np.arange(m.shape[1]), 0), axis=1)
    out = np.empty(m.shape, int)
    np.put_along_axis(out, order, first + 1, 1)
    return out


def minmax(matrix: np.ndarray) -> np.ndarray:
    """Per-row min-max over the finite entries; a row without spread is 0; ``-inf`` stays ``-inf``."""
    finite = np.isfinite(matrix)
    lo = np.where(finite, matrix, np.inf).min(1, keepdims=True)
    hi = np.where(finite, matrix, -np.inf).max(1, keepdims=True)
    spread = hi > lo
    scaled = (np.where(finite, matrix, 0.0) - np.where(spread, lo, 0.0)) / np.where(spread, hi - lo, 1.0)
    return np.where(finite, scaled * spread, -np.inf)


def rrf(matrices: list[np.ndarray], rrf_k: int) -> np.ndarray:
    hidden = ~np.isfinite(matrices[0])
    fused = sum(1.0 / (rrf_k + ranks(m)) for m in matrices)
    return np.where(hidden, -np.inf, fused)


def convex(a: np.ndarray, b: np.ndarray, w) -> np.ndarray:
    """``w`` a scalar or one weight per row."""
    w = np.asarray(w, float).reshape(-1, 1) if np.ndim(w) else float(w)
    with np.errstate(invalid="ignore"):  # 0 * -inf at w = 0 or 1: hidden tools stay -inf below
        fused = w * minmax(a) + (1 - w) * minmax(b)
    return np.where(np.isfinite(a), fused, -np.inf)


def combine(matrices: list[np.ndarray], method: str, rrf_k: int, weight=0.5) -> np.ndarray:
    """The members' matrices (same rows and columns) fused by ``method``; ``weight``: convex's, scalar or per row."""
    return rrf(matrices, rrf_k) if method == "rrf" else convex(matrices[0], matrices[1], weight)


class HybridRanker:
    """Fitted members fused per query (the cost benchmark's view; a convex hybrid uses ``weight``)."""

    def __init__(self, members, method: str, rrf_k: int, weight: float = 0.5):
        self.members, self.method, self.rrf_k, self.weight = members, method, rrf_k, weight

    def score_many(self, queries):
        mats = [np.atleast_2d(np.asarray(m.score_many(queries), float)) for m in self.members]
        return combine(mats, self.method, self.rrf_k, self.weight)

    def score(self, query):
        return combine([np.asarray(m.score(query), float)[None, :] for m in self.members], self.method, self.rrf_k,
                       self.weight)[0]

    def size_bytes(self) -> int:
        return sum(m.size_bytes() for m in self.members)
