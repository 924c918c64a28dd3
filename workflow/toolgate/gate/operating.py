"""Operating points of a gate (paper Figure 2): coverage against danger rate as its threshold moves
(docs/metrics.md, 'Operating points').
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.scores import Scores, load_scores, mode_note, route_note, route_step, top_actions
from ..core.signals import signal_rows, studied_gates
from ..tables import write_table
from ..utterances import is_in_catalog


def outcomes(rows, top1, route) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: (correct if admitted, correct if not admitted, dangerous if admitted)."""
    outcome = np.array([r["gold_outcome"] for r in rows])
    gold = np.array([r["gold_tool"] or "" for r in rows])
    local_ok = np.array([is_in_catalog(o) for o in outcome], bool) & (top1 == gold)  # correct if admitted
    route_ok = (outcome == "chat") & (route == "chat")  # correct if not admitted
    return local_ok, route_ok, outcome == "delegate"


def weighted_sweep(score: np.ndarray, parts, weights: np.ndarray):
    """(thresholds, danger, coverage, admitted) at every distinct threshold, descending, then 'nothing in gate'.

    ``parts``: :func:`outcomes`; ``weights`` (B x n, or n): each row's weight, e.g. a bootstrap resample's cluster
    draws. danger, coverage and admitted are (B x thresholds) fractions of the total weight.
    """
    local_ok, route_ok, danger_if_in = parts
    w = np.atleast_2d(np.asarray(weights, float))
    order = np.argsort(-score, kind="stable")
    s = score[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])  # tie groups, highest score first

    ranked = w[:, order]  # the resamples' columns gathered once, in score order

    def admitted_sum(flag):  # weight of flagged rows with score >= each threshold, then none admitted
        inn = np.cumsum(np.add.reduceat(ranked * flag[order], starts, axis=1), axis=1)
        return np.hstack([inn, np.zeros((len(w), 1))])

    total = w.sum(1, keepdims=True)
    danger = admitted_sum(danger_if_in) / total
    coverage = (admitted_sum(local_ok) + (w * route_ok).sum(1, keepdims=True) - admitted_sum(route_ok)) / total
    return np.r_[s[starts], np.inf], danger, coverage, admitted_sum(np.ones(len(score), bool)) / total


def sweep(score: np.ndarray, rows, top1, route) -> pd.DataFrame:
    """Danger and coverage at every distinct threshold (plus 'nothing in gate')."""
    thresholds, danger, coverage, admitted = weighted_sweep(score, outcomes(rows, top1, route), np.ones(len(rows)))
    return pd.DataFrame({"threshold": thresholds, "danger_rate": danger[0], "coverage": coverage[0],
                         "admitted": admitted[0]})


def within_budget(danger, budget: float):
    return danger <= budget + 1e-12


def best_within(sw: pd.DataFrame, budget: float) -> pd.Series:
    ok = sw[within_budget(sw["danger_rate"], budget)]
    return ok.sort_values(["coverage", "danger_rate"], ascending=[False, True], kind="stable").iloc[0]


def best_coverage(danger: np.ndarray, coverage: np.ndarray, budget: float) -> np.ndarray:
    """Per row of a :func:`weighted_sweep`: the highest coverage with danger within budget (best_within's)."""
    return np.where(within_budget(danger, budget), coverage, -np.inf).max(1)


def envelope(sw: pd.DataFrame, grid: np.ndarray) -> np.ndarray:
    """Best coverage achievable at danger <= d, for each d in grid."""
    s = sw.sort_values("danger_rate")
    best = np.maximum.accumulate(s["coverage"].to_numpy())
    i = np.searchsorted(s["danger_rate"].to_numpy(), grid, side="right") - 1
    return np.where(i >= 0, best[np.maximum(i, 0)], np.nan)


def operating_frames(rows, lexical: Scores, signals: pd.DataFrame, gates: list[str], budget: float, reference="g3"):
    sig = signal_rows(signals, rows)
    top1, route = top_actions(lexical, rows)[:, 0], route_step(lexical, rows)
    sweeps = {g: sweep(sig[g].to_numpy(), rows, top1, route) for g in gates}
    n = len(rows)
    delegate = np.array([r["gold_outcome"] == "delegate" for r in rows])
    multistep = np.array([r["subtype"] == "multistep" for r in rows]) & delegate
    ceiling, extended = 1 - delegate.sum() / n, 1 - (delegate & ~multistep).sum() / n
    grid = np.unique(np.concatenate([s["danger_rate"].to_numpy() for s in sweeps.values()]))
    recs = []
    for g, sw in sweeps.items():
        b = best_within(sw, budget)
        rec = {"gate": g, "budget": budget, "best_coverage": b["coverage"], "danger_rate": b["danger_rate"],
               "threshold": b["threshold"], "admitted": b["admitted"], "ceiling_current": ceiling,
               "ceiling_extended": extended, "reference_overtakes_at": np.nan}
        if g != reference and reference in sweeps:
            above = np.flatnonzero(envelope(sweeps[reference], grid) > envelope(sw, grid))
            rec["reference_overtakes_at"] = grid[above[0]] if len(above) else np.nan
        recs.append(rec)
    table = pd.DataFrame(recs)
    curves = pd.concat([sw.assign(gate=g) for g, sw in sweeps.items()], ignore_index=True)
    return table, curves[["gate", "threshold", "danger_rate", "coverage", "admitted"]]


def write_operating_points(exp):
    """The rule's named outputs ``table`` (operating points) and ``curves`` (sweeps) of every studied gate, at the
    gate's danger budget, with the ``lexical`` input's scores."""
    rows, budget, seed, outputs = exp.main, exp.gate.danger_budget, exp.seed, exp.output  # main: no mismatch_hard
    lexical = load_scores(exp.input.lexical)
    table, curves = operating_frames(rows, lexical, pd.read_csv(exp.input.signals), studied_gates(exp.signals), budget)
    note = (f"best_coverage under danger <= {budget}. docs/metrics.md, 'Operating points'. {mode_note(rows)} "
            + route_note(lexical))
    write_table(table, outputs.table, "Operating points of each gate (paper Figure 2)", note.rstrip(), seed,
                paper=("operating.",))
    write_table(curves, outputs.curves, "Operating-point sweep (data of figure 2)", "", seed)
    return table
