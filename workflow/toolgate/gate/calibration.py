"""Calibration of the gates: Platt scaling and isotonic regression, fitted out of fold.

The uncalibrated probability of G3 is the sigmoid of its out-of-fold log-odds
(a class-balanced model, so not calibrated to the base rate); an encoder gate's
is its maximum cosine clipped to [0, 1]. Calibrators are fitted on the other
folds' (score, label) pairs with the gate study's folds. A monotone map leaves
AUC unchanged up to ties (isotonic regression creates ties).

pandas (and scikit-learn) are imported where the study's tables are made (and calibrators fitted): a router applies
:func:`platt_probability` on numpy alone (issue 37).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..metrics import auc, calibration_errors, reliability_curve
from .signals import Signal, studied_gates

if TYPE_CHECKING:
    import pandas as pd


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


def calibration_frames(signals: pd.DataFrame, gates: list[Signal], bins: int):
    import pandas as pd

    y, fold = signals["in_catalog"].to_numpy(), signals["fold"].to_numpy()
    mism = signals["slice"].isin(["mismatch", "out"]).to_numpy()
    recs, curves = [], []
    for sig in gates:
        gate, score = sig.name, signals[sig.name].to_numpy()
        probs = {"none": raw_probability(sig, score), "platt": calibrate_oof(score, y, fold, "platt"),
                 "isotonic": calibrate_oof(score, y, fold, "isotonic")}
        for method, p in probs.items():
            rec = {"gate": gate, "method": method}
            for sl, m in (("all", np.ones(len(y), bool)), ("mismatch", mism)):
                ece, mce = calibration_errors(p[m], y[m], bins)
                rec[f"ece_{sl}"], rec[f"mce_{sl}"], rec[f"auc_{sl}"] = ece, mce, auc(p[m], y[m])
                for b, mp, fp, n in reliability_curve(p[m], y[m], bins):
                    curves.append({"gate": gate, "method": method, "slice": sl, "bin": b, "mean_predicted": mp,
                                   "fraction_in_catalog": fp, "n": n})
            recs.append(rec)
    return pd.DataFrame(recs), pd.DataFrame(curves)


def write_calibration(signals_csv, outputs, reg: dict[str, Signal], bins: int, seed: int):
    """``outputs``: the rule's named outputs ``table`` and ``curves`` (reliability curves); every studied gate of ``reg``."""
    import pandas as pd

    from ..tables import write_table

    signals = pd.read_csv(signals_csv)
    signals = signals[signals["slice"] != "mismatch_hard"]  # the main set only
    table, curves = calibration_frames(signals, [reg[g] for g in studied_gates(reg)], bins)
    write_table(table, outputs.table, "Calibration of the gates (out of fold)",
                f"ECE/MCE over {bins} equal-width bins, on all utterances and on mismatch-in vs out.", seed,
                paper=("calibration.",))
    write_table(curves, outputs.curves, "Reliability curves (data of figure 3)", "", seed)
    return table
