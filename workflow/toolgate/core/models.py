"""The fitted gates' protocol: standardised inputs, class-balanced logistic regression, out-of-fold log-odds with folds
stratified by label and grouped by ``pair_id`` (a request and its translation never sit on both sides).

A deployable fit (``payload``) folds the standardisation into the coefficients, so it applies unchanged elsewhere.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .signals import Signal, fitted

if TYPE_CHECKING:
    import pandas as pd


# scikit-learn is imported where a gate is fitted: it takes about a second, and most jobs that read this module
# (scores, figures, the router's export and cost) never fit one.
def gate_model():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=1000))


def oof_scores(x: np.ndarray, y: np.ndarray, fold_list) -> np.ndarray:
    """Out-of-fold decision scores (log-odds) of the balanced gate model."""
    out = np.full(len(y), np.nan)
    for train, test in fold_list:
        out[test] = gate_model().fit(x[train], y[train]).decision_function(x[test])
    return out


def fit_signals(raw: pd.DataFrame, reg: dict[str, Signal], y: np.ndarray, fold_list) -> dict[str, np.ndarray]:
    """Every fitted signal of ``reg``, out of fold on its ``inputs`` (columns of ``raw``)."""
    return {s.name: oof_scores(raw[list(s.inputs)].to_numpy(), y, fold_list) for s in fitted(reg)}


def payload(x: np.ndarray, y: np.ndarray, names) -> str:
    """A deployable fit: coefficients folded through the standardisation, as compact JSON."""
    m = gate_model().fit(x, y)
    scaler, lr = m[0], m[1]
    coef = lr.coef_[0] / scaler.scale_
    intercept = float(lr.intercept_[0] - (coef * scaler.mean_).sum())
    return json.dumps({"features": list(names), "coef": [float(f"{c:.6g}") for c in coef],
                       "intercept": float(f"{intercept:.6g}")}, separators=(",", ":"))


def payloads(raw: pd.DataFrame, reg: dict[str, Signal], y: np.ndarray) -> dict[str, dict]:
    """Every fitted signal of ``reg`` fitted on all of ``raw`` (gates.json: what transfer applies)."""
    return {s.name: json.loads(payload(raw[list(s.inputs)].to_numpy(), y, s.inputs)) for s in fitted(reg)}


def load_payloads(path) -> dict[str, dict]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def payload_scores(fit: dict, columns) -> np.ndarray:
    """Log-odds of a gate fitted elsewhere (a payload), applied unchanged to ``columns`` (name -> values per row: a
    DataFrame, :class:`toolgate.core.inputs.Columns`, a dict of arrays)."""
    x = np.column_stack([np.asarray(columns[f], float) for f in fit["features"]])
    return float(fit["intercept"]) + x @ np.asarray(fit["coef"], float)
