"""Metrics with hand-checkable definitions (docs/metrics.md).

``auc`` equals ``sklearn.metrics.roc_auc_score`` including ties (a tie between
a positive and a negative counts one half). ``weighted_auc`` is the same
statistic with per-item weights, vectorised over many weight vectors at once:
it is how the cluster bootstrap evaluates 2000 resamples without a Python loop;
``weighted_fpr_at_tpr`` (FPR at 95% TPR) is vectorised the same way.
``rank_metrics`` reads 1-based gold ranks with one relevant item per request;
its nDCG@k equals ``sklearn.metrics.ndcg_score`` on untied scores.
"""
from __future__ import annotations

import numpy as np


def weighted_auc(scores: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AUC of ``scores`` for labels ``y`` under each row of ``weights`` (B x n, or n).

    AUC = sum_{i pos, j neg} w_i w_j ([s_i > s_j] + 0.5 [s_i = s_j]) / (W_pos W_neg).
    """
    scores, y = np.asarray(scores, float), np.asarray(y).astype(bool)
    w = np.atleast_2d(np.asarray(weights, float))
    order = np.argsort(scores, kind="stable")
    s_sorted = scores[order]
    starts = np.flatnonzero(np.r_[True, s_sorted[1:] != s_sorted[:-1]])  # tie groups
    w, y = w[:, order], y[order]  # the resamples' columns gathered once, in score order
    wp = np.add.reduceat(w * y, starts, axis=1)
    wn = np.add.reduceat(w * ~y, starts, axis=1)
    neg_below = np.cumsum(wn, axis=1) - wn
    num = (wp * (neg_below + 0.5 * wn)).sum(1)
    den = wp.sum(1) * wn.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, num / den, np.nan)
    return out if np.ndim(weights) > 1 else out[0]


def weighted_fpr_at_tpr(scores: np.ndarray, y: np.ndarray, weights: np.ndarray, tpr: float = 0.95) -> np.ndarray:
    """False-positive rate at the highest threshold whose true-positive rate reaches ``tpr``, per weight row.

    Admitted = score >= t. t* = the largest score t with W_pos(s >= t) / W_pos >= tpr; the value is
    W_neg(s >= t*) / W_neg (ties enter together). Vectorised over rows of ``weights`` like :func:`weighted_auc`.
    """
    scores, y = np.asarray(scores, float), np.asarray(y).astype(bool)
    w = np.atleast_2d(np.asarray(weights, float))
    order = np.argsort(-scores, kind="stable")
    s_sorted = scores[order]
    starts = np.flatnonzero(np.r_[True, s_sorted[1:] != s_sorted[:-1]])  # tie groups, highest score first
    w, y = w[:, order], y[order]
    tp = np.cumsum(np.add.reduceat(w * y, starts, axis=1), axis=1)
    fp = np.cumsum(np.add.reduceat(w * ~y, starts, axis=1), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        reached = tp / tp[:, -1:] >= tpr - 1e-12
        first = reached.argmax(1)
        out = np.where(reached.any(1) & (fp[:, -1] > 0), fp[np.arange(len(w)), first] / fp[:, -1], np.nan)
    return out if np.ndim(weights) > 1 else out[0]


def auc(scores, y) -> float:
    """Area under the ROC curve (Mann-Whitney), ties counted one half."""
    return float(weighted_auc(scores, y, np.ones(len(y))))


def calibration_errors(prob: np.ndarray, y: np.ndarray, bins: int) -> tuple[float, float]:
    """(expected, maximum) calibration error over ``bins`` equal-width bins of [0, 1].

    ECE = sum_b |b|/n |mean(y in b) - mean(p in b)|; MCE = max over non-empty bins.
    """
    prob, y = np.clip(np.asarray(prob, float), 0, 1), np.asarray(y, float)
    idx = np.minimum((prob * bins).astype(int), bins - 1)
    ece, mce = 0.0, 0.0
    for b in range(bins):
        m = idx == b
        if m.any():
            gap = abs(y[m].mean() - prob[m].mean())
            ece += m.mean() * gap
            mce = max(mce, gap)
    return ece, mce


def reliability_curve(prob: np.ndarray, y: np.ndarray, bins: int):
    """(bin index, mean predicted, observed frequency, count) for non-empty bins."""
    prob, y = np.clip(np.asarray(prob, float), 0, 1), np.asarray(y, float)
    idx = np.minimum((prob * bins).astype(int), bins - 1)
    out = []
    for b in range(bins):
        m = idx == b
        if m.any():
            out.append((b, prob[m].mean(), y[m].mean(), int(m.sum())))
    return out


def rank_metrics(ranks, top_k: int = 5) -> dict[str, float]:
    """top1, top{top_k}, mrr, ndcg_at_10 and recall_at_5 of 1-based gold ranks (``inf``: the gold is not ranked).

    One relevant item per request, so the ideal DCG is 1: nDCG@10 = mean(1 / log2(rank + 1) if rank <= 10, else 0);
    recall@5 = #(rank <= 5) / n.
    """
    r = np.asarray(ranks, float)
    gain = np.where(r <= 10, 1.0 / np.log2(r + 1), 0.0)
    return {"top1": float((r == 1).mean()), f"top{top_k}": float((r <= top_k).mean()),
            "mrr": float((1.0 / r).mean()), "ndcg_at_10": float(gain.mean()), "recall_at_5": float((r <= 5).mean())}
