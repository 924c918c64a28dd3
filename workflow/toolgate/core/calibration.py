"""Calibration of the gates: Platt scaling and isotonic regression, fitted out of fold (docs/metrics.md,
'Calibration'). A monotone map leaves AUC unchanged up to ties (isotonic regression creates ties).

scikit-learn is imported where calibrators are fitted: a router applies :func:`platt_probability` on numpy alone.
"""
from __future__ import annotations

import numpy as np

from .signals import Signal


def raw_probability(signal: Signal, score: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-score)) if signal.log_odds else np.clip(score, 0, 1)


def fit_platt(score: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(coefficient, intercept) of Platt scaling fitted on every (score, label) pair: what a router ships."""
    from sklearn.linear_model import LogisticRegression  # imported where fitted, as in gate.models

    m = LogisticRegression().fit(score[:, None], y)
    return float(m.coef_[0, 0]), float(m.intercept_[0])


def platt_probability(score, coef: float, intercept: float) -> np.ndarray:
    """P(in catalog) of a fitted Platt calibrator; the one formula export and runtime share."""
    return 1.0 / (1.0 + np.exp(-(coef * np.asarray(score, float) + intercept)))


def calibrate_oof(score: np.ndarray, y: np.ndarray, fold: np.ndarray, method: str) -> np.ndarray:
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    out = np.empty(len(y))
    for f in np.unique(fold):
        tr, te = fold != f, fold == f
        if method == "platt":
            m = LogisticRegression().fit(score[tr, None], y[tr])
            out[te] = m.predict_proba(score[te, None])[:, 1]
        else:
            m = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(score[tr], y[tr])
            out[te] = m.predict(score[te])
    return out
