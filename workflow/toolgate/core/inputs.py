"""Gate study v2's raw signals (encoder features, rank agreement, exemplar kNN) from score matrices and embeddings.

Every signal is computed on numpy alone, as named columns (:class:`Columns`), as a deployed router reads them; the
study's DataFrames are made from those, and pandas is imported only there. docs/metrics.md, 'Gate signals'.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .scores import gold_rank, top_order
from .signals import agreement_signals, encoder_features, exemplar_signals
from .text import char_ngrams

if TYPE_CHECKING:
    import pandas as pd

EMPTY = -1.0  # exemplar kNN of a request with no admissible exemplar


class Columns(dict):
    """Named columns of one length, in order (name -> 1-D array): the signals computed without pandas, as a deployed
    router reads them. It reads like the DataFrame the study makes of it (:meth:`frame`): ``c[name]`` is a column,
    ``c[[names]]`` those columns, ``columns`` their names, ``to_numpy()`` the matrix."""

    @property
    def columns(self) -> list[str]:
        return list(self)

    def __getitem__(self, key):
        if isinstance(key, list):
            return Columns({k: dict.__getitem__(self, k) for k in key})
        return dict.__getitem__(self, key)

    def to_numpy(self) -> np.ndarray:
        return np.column_stack(list(self.values()))

    def frame(self) -> pd.DataFrame:
        """The columns as a DataFrame (pandas is imported here, by the study's callers only)."""
        import pandas as pd

        return pd.DataFrame(self)


def columns_by_size(sizes, columns_of) -> Columns:
    """``columns_of(idx)`` (a mapping of columns, a DataFrame too) for each group of rows of equal size (candidate
    count), reassembled in row order."""
    sizes = np.asarray(sizes)
    if len(sizes) and (sizes == sizes[0]).all():  # one group (every catalog-wide set): no reassembly
        return Columns({k: np.asarray(v) for k, v in columns_of(np.arange(len(sizes))).items()})
    groups = [np.flatnonzero(sizes == m) for m in np.unique(sizes)]
    parts = [columns_of(idx) for idx in groups]
    order = np.argsort(np.concatenate(groups), kind="stable")  # the groups' rows back in row order
    return Columns({k: np.concatenate([np.asarray(p[k]) for p in parts])[order] for k in parts[0]})


def columns_by_visible(matrices, columns_of) -> Columns:
    """``columns_of(idx, *compacted)`` per group of rows ``idx`` with the same number of visible (finite) scores
    in ``matrices[0]``; each matrix keeps only those columns, in catalog order (so ties keep catalog order)."""
    finite = np.isfinite(matrices[0])
    return columns_by_size(finite.sum(1), lambda idx: columns_of(
        idx, *(np.asarray(m)[idx][finite[idx]].reshape(len(idx), -1) for m in matrices)))


def by_size(sizes, frame_of) -> pd.DataFrame:
    """:func:`columns_by_size` as a DataFrame."""
    return columns_by_size(sizes, frame_of).frame()


def by_visible(matrices, frame_of) -> pd.DataFrame:
    """:func:`columns_by_visible` as a DataFrame."""
    return columns_by_visible(matrices, frame_of).frame()


def encoder_columns(ranker: str, cosines: np.ndarray, k: int) -> Columns:
    """Max cosine, top-1 minus top-2 (a single candidate: minus 0, as an absent tool) and top-k mean per row."""
    maxcos, margin, topk = encoder_features(ranker)
    s = -np.sort(-cosines, axis=1)
    second = s[:, 1] if s.shape[1] > 1 else np.zeros(len(s))
    return Columns({maxcos.name: cosines.max(1), margin.name: s[:, 0] - second,
                    topk.name: s[:, :min(k, s.shape[1])].mean(1)})


def agreement_columns(lexical: str, ranker: str, lexical_scores: np.ndarray, cosines: np.ndarray) -> Columns:
    """Top-1 agreement (0/1) and the reciprocal rank of the lexical top-1 in the encoder's order, per row."""
    agrees, rr = agreement_signals(lexical, ranker)
    rank = gold_rank(cosines, top_order(lexical_scores, 1)[:, 0])
    return Columns({agrees.name: (rank == 1).astype(float), rr.name: 1.0 / rank})


def encoder_frame(ranker: str, cosines: np.ndarray, k: int) -> pd.DataFrame:
    """:func:`encoder_columns` as a DataFrame."""
    return encoder_columns(ranker, cosines, k).frame()


def agreement_frame(lexical: str, ranker: str, lexical_scores: np.ndarray, cosines: np.ndarray) -> pd.DataFrame:
    """:func:`agreement_columns` as a DataFrame."""
    return agreement_columns(lexical, ranker, lexical_scores, cosines).frame()


def exemplar_knn(emb: np.ndarray, y: np.ndarray, groups: np.ndarray, fold_list, gold=None, candidates=None) -> np.ndarray:
    """Out-of-fold max cosine to the training folds' in-catalog requests (unit-norm ``emb``).

    An exemplar is never in the request's own group (``groups``: pair or cluster), whatever the folds. With
    ``gold`` (each row's gold tool) and ``candidates`` (each row's candidate ids), a request sees only exemplars
    whose gold tool is among its own candidates.
    """
    emb, groups = np.asarray(emb, float), np.asarray(groups)
    admissible = _candidate_mask(gold, candidates) if candidates is not None else None
    out = np.full(len(y), EMPTY)
    for train, test in fold_list:
        memory = train[np.asarray(y)[train] == 1]
        sims = emb[test] @ emb[memory].T
        ok = groups[test][:, None] != groups[memory][None, :]
        if admissible is not None:
            ok &= admissible[np.ix_(test, memory)]
        out[test] = _nearest(sims, ok)
    return out


def _nearest(sims: np.ndarray, ok) -> np.ndarray:
    """Per row, the highest cosine among the admissible exemplars (``ok``); ``EMPTY`` where none is."""
    best = np.where(ok, sims, -np.inf).max(1, initial=-np.inf)
    return np.where(np.isfinite(best), best, EMPTY)


def exemplar_max(emb: np.ndarray, memory: np.ndarray) -> np.ndarray:
    """A new request's exemplar kNN: its max cosine to every exemplar of ``memory`` (unit-norm rows); a deployed
    router's, whose exemplars are the experiment's in-catalog requests and which has no fold to leave out."""
    emb, memory = np.asarray(emb, float), np.asarray(memory, float)
    return _nearest(emb @ memory.T, np.ones((len(emb), len(memory)), bool))


def _candidate_mask(gold, candidates) -> np.ndarray:
    """(n x n) row i may see row j's request: j's gold tool is one of i's candidates."""
    ids = {t: k for k, t in enumerate(sorted({t for c in candidates for t in c} | {g for g in gold if g}))}
    has = np.zeros((len(candidates), len(ids)), bool)
    for i, c in enumerate(candidates):
        has[i, [ids[t] for t in c]] = True
    g = np.array([ids[t] if t else -1 for t in gold])
    return np.where(g[None, :] >= 0, has[:, np.maximum(g, 0)], False)


def query_lengths(texts, text) -> np.ndarray:
    """L: each request's character n-gram count (``text``: the text settings, ``ngram`` and ``pad``: the config's
    ``Text``, a router manifest's ``text``)."""
    return np.array([len(char_ngrams(t, text.ngram, text.pad)) for t in texts])


def score_columns(action_scores: np.ndarray, lengths: np.ndarray, k: int) -> Columns:
    """The six BM25 score features and length, one row per query.

    ``-inf`` marks a tool the request does not see (per-request candidates,
    :mod:`toolgate.core.scores`): each row's features use only its finite scores,
    with ``k = min(k, m)`` for a row of m visible tools. A row with a single
    visible tool gets a zero second score (a BM25 score is never negative, so an
    absent tool scores 0): margin = s1, norm margin = 1 when s1 > 0, score over
    mean = 1, entropy = 0.
    """
    lengths = np.asarray(lengths, float)

    def columns(idx, mat):
        m = mat.shape[1]
        if m == 1:
            mat = np.hstack([mat, np.zeros((len(mat), 1))])
        return _features(mat, lengths[idx], min(k, m))

    return columns_by_visible([np.asarray(action_scores, float)], columns)  # every column float (lengths included)


def score_features(action_scores: np.ndarray, lengths: np.ndarray, k: int) -> pd.DataFrame:
    """:func:`score_columns` as a DataFrame."""
    return score_columns(action_scores, lengths, k).frame()


def _features(action_scores: np.ndarray, lengths: np.ndarray, k: int) -> Columns:
    s = -np.sort(-action_scores, axis=1)
    s1, s2, top = s[:, 0], s[:, 1], s[:, :k]
    with np.errstate(divide="ignore", invalid="ignore"):
        norm_margin = np.where(s1 > 0, (s1 - s2) / s1, 0.0)
        mean_k = top.mean(1)
        over_mean = np.where(mean_k > 0, s1 / mean_k, 0.0)
    z = np.exp(top - top.max(1, keepdims=True))
    p = z / z.sum(1, keepdims=True)
    entropy = -(p * np.log(np.where(p > 0, p, 1))).sum(1)
    lengths = np.asarray(lengths, float)
    return Columns({"top_score": s1, "raw_margin": s1 - s2, "norm_margin": norm_margin,
                    "score_over_mean": over_mean, "topk_entropy": entropy,
                    "score_per_term": s1 / np.maximum(lengths, 1), "length": lengths})


def request_signals(lexical: tuple[str, np.ndarray], cosines: dict[str, np.ndarray], lengths, k: int,
                    knn: dict[str, np.ndarray]) -> Columns:
    """Every raw signal of the registry, one row per request: the lexical ranker's score features and length,
    then for each encoder its features, rank agreement with the lexical ranker and its exemplar kNN (``knn``).

    ``lexical``: (ranker name, score matrix); ``cosines``: encoder name -> cosine matrix; matrices hold ``-inf``
    where a request does not see a tool. The gate study and a deployed router (:mod:`toolgate.core.gates`) both
    compute their signals here, on numpy alone; they differ only in how exemplar kNN is taken.
    """
    lexical_name, lex = lexical
    out = score_columns(lex, lengths, k)
    for name, cos in cosines.items():
        out.update(columns_by_visible([cos, lex], lambda _, c, lx: Columns(  # noqa: B023
            {**encoder_columns(name, c, k), **agreement_columns(lexical_name, name, lx, c)})))
        out[exemplar_signals(name)[0].name] = knn[name]
    return out


def raw_signals(lexical: tuple[str, np.ndarray], encoders: dict[str, tuple[np.ndarray, np.ndarray]], lengths,
                split: tuple, k: int, candidates: tuple = ()) -> pd.DataFrame:
    """:func:`request_signals` with exemplar kNN out of fold (:func:`exemplar_knn`), as the study's DataFrame.

    ``encoders``: name -> (cosine matrix, request embeddings). ``split``: (labels, groups, folds) for exemplar
    kNN; ``candidates``: (gold tools, candidate lists) where rows have their own.
    """
    knn = {name: exemplar_knn(emb, *split, *candidates) for name, (_, emb) in encoders.items()}
    return request_signals(lexical, {name: cos for name, (cos, _) in encoders.items()}, lengths, k, knn).frame()
