"""Routing pipelines (paper Section 3, Table 1, Appendix G / Table A3): decisions, gold and the baselines.

A decision is ``("action", tool)``, ``("ask", tool)``, ``("chat", None)`` or ``("delegate", None)``; nothing is
executed. Tool-name routing is scored, not slots or arguments (as the paper), so the gold tool counts executed or
asked. docs/metrics.md, 'Routing baselines'.
"""
from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..config import Gate, Routing, Run
from ..core.calibration import calibrate_oof
from ..core.catalog import ACTION, MUTATING_NOTE, actions, mutating_known
from ..core.decisions import ladder_decisions
from ..core.scores import ROUTE_NOTE, Scores, has_routes, load_scores, mode_note, route_step, top_actions
from ..core.signals import Signal, gate_signal, signal_rows
from ..stats import cluster_weights
from ..tables import write_table
from ..utterances import is_in_catalog

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Study:
    """The settings a routing study reads: experiment-wide, gate, routing and the signal registry."""
    run: Run
    gate: Gate
    routing: Routing
    signals: dict[str, Signal]


class Gold:
    """Gold labels as arrays aligned with the utterance rows."""

    def __init__(self, rows, catalog):
        self.outcome = np.array([r["gold_outcome"] for r in rows])
        self.tool = np.array([r["gold_tool"] or "" for r in rows])
        self.in_catalog = np.array([is_in_catalog(o) for o in self.outcome], bool)
        self.delegate = self.outcome == "delegate"
        self.chat = self.outcome == "chat"
        self.n = len(rows)
        # None when the catalog's actions carry no mutating flags: the mutating rows are then "not available"
        self.mutating = ({t["id"] for t in actions(catalog) if t["mutating"]}
                         if mutating_known(catalog) else None)


# ----------------------------------------------------------------------------- decision metrics
def correct(kind: np.ndarray, tool: np.ndarray, g: Gold) -> np.ndarray:
    local = np.isin(kind, ["action", "ask"])
    return np.where(g.in_catalog, local & (tool == g.tool), kind == g.outcome)


def utility(kind: np.ndarray, tool: np.ndarray, g: Gold, costs: dict) -> np.ndarray:
    """Per request, what the decision is worth (``costs``: router.utility). A request missing a detail (gold ask)
    is served right by asking about its action, and acting on it counts as an ask; a wrong act on a mutating action
    costs ``wrong_act_mutating`` (``wrong_act`` where the catalog has no mutating flags)."""
    act, ask, right = kind == "action", kind == "ask", tool == g.tool
    gold_ask = g.outcome == "ask"
    mutating = np.isin(tool, sorted(g.mutating)) if g.mutating is not None else np.zeros(g.n, bool)
    wrong_act = np.where(mutating, costs["wrong_act_mutating"], costs["wrong_act"])
    served = np.where(gold_ask, ask & right, act & right) & g.in_catalog
    half = np.where(gold_ask, act & right, ask & right) & g.in_catalog
    return np.select([served, half, act & ~(g.in_catalog & right), ask, ~g.in_catalog & (kind == g.outcome)],
                     [costs["right_act"], costs["right_ask"], wrong_act, costs["wrong_ask"], costs["right_route"]], 0.0)


def indicators(kind, tool, g: Gold) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per-utterance (numerator, denominator) indicators of Table 1's rows (none for the mutating row when the
    catalog has no mutating flags)."""
    executed = kind == "action"
    ones = np.ones(g.n)
    out = {"delegate_to_skill": (g.delegate & executed, g.delegate.astype(float))}
    if g.mutating is not None:
        mut = np.array([t in g.mutating for t in tool])
        out["mutating_false_positive"] = (executed & mut & (tool != g.tool), ones)
    out["delegations"] = (kind == "delegate", ones)
    out["accuracy"] = (correct(kind, tool, g), ones)
    return out


# ----------------------------------------------------------------------------- baselines
def standalone(lexical: Scores, rows) -> tuple[np.ndarray, np.ndarray]:
    """Argmax over the whole pool (actions + route entries)."""
    m = lexical.for_rows(rows).matrix
    top = np.argmax(m, axis=1)
    ids, kinds = lexical.tool_ids[top], lexical.kinds[top]
    kind = np.where(kinds == ACTION, "action", np.where(ids == "clarify", "ask", ids))
    return kind, np.where(kinds == ACTION, ids, "")


def quantile_grid(score, n):
    return np.unique(np.quantile(score, np.linspace(0, 1, n)))


def choose(evaluate, candidates, train, budget, ask_cap, objective):
    """Best candidate on ``train`` rows under the constraints; falls back to the least dangerous."""
    best, best_val, safest, safest_d = None, -np.inf, None, np.inf
    for cand in candidates:
        kind, tool, met = evaluate(cand)
        d = met["danger"][train].mean()
        a = (kind[train] == "ask").mean()
        val = met[objective][train].mean()
        if d <= budget + 1e-12 and a <= ask_cap + 1e-12 and val > best_val:
            best, best_val = cand, val
        if d < safest_d:
            safest, safest_d = cand, d
    return best if best is not None else safest


def oof_decisions(evaluate, candidates, fold, budget, ask_cap, objective):
    """Out-of-fold decisions: thresholds chosen on the other folds, applied to each fold."""
    kind = np.empty(len(fold), dtype=object)
    tool = np.empty(len(fold), dtype=object)
    chosen = {}
    for f in np.unique(fold):
        cand = choose(evaluate, candidates, fold != f, budget, ask_cap, objective)
        k, t, _ = evaluate(cand)
        kind[fold == f], tool[fold == f] = k[fold == f], t[fold == f]
        chosen[int(f)] = cand
    return kind.astype(str), tool.astype(str), chosen


def ladder_setting(lexical: Scores, rows, g: Gold, grid):
    """(evaluate, threshold candidates) of the ladder on ``rows``: (lo, hi) pairs of quantiles of the top score."""
    m = lexical.for_rows(rows).matrix

    def evaluate(c):
        kind, tool = ladder_decisions(m, lexical.tool_ids, lexical.kinds, *c)
        return kind, tool, {"danger": g.delegate & (kind == "action"), "accuracy": correct(kind, tool, g)}

    return evaluate, list(itertools.combinations_with_replacement(quantile_grid(m.max(1), grid), 2))


def ladder(lexical: Scores, rows, g: Gold, fold, budget, grid):
    """Single-pool ladder on the pool's top score: execute >= hi > ask >= lo > delegate."""
    return oof_decisions(*ladder_setting(lexical, rows, g, grid), fold, budget, 1.0, "accuracy")


def study_ladder(lexical: Scores, rows, g: Gold, signals: pd.DataFrame, study: Study):
    """The ladder as routing_baselines runs it; the pipelines' guard calls this too, so both share folds and thresholds."""
    fold = signal_rows(signals, rows)["fold"].to_numpy()
    return ladder(lexical, rows, g, fold, study.gate.danger_budget, study.routing.grid)


def gated(lexical: Scores, rows, g: Gold, gate: tuple, budget, grid):
    """The split architecture: gate in -> lexical top-1 action; gate out -> route step.

    ``gate``: (out-of-fold gate probability, fold id) aligned with ``rows`` (:func:`gate_probability`).
    """
    gate_prob, fold = gate
    top1 = top_actions(lexical, rows)[:, 0]
    route = route_step(lexical, rows)

    def evaluate(t):
        inn = gate_prob >= t
        kind = np.where(inn, "action", route)
        tool = np.where(inn, top1, "")
        return kind, tool, {"danger": g.delegate & inn, "accuracy": correct(kind, tool, g)}

    return oof_decisions(evaluate, list(quantile_grid(gate_prob, grid)), fold, budget, 1.0, "accuracy")


def baselines_frame(columns: dict, g: Gold, n_resamples: int, seed: int, clusters) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1: rows x columns with counts and fractions; bootstrap intervals of column differences. A metric whose
    denominator is 0 on a set (no gold-delegate request in a small imported set) is NaN, without a warning."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _baselines_frame(columns, g, n_resamples, seed, clusters)


def _baselines_frame(columns: dict, g: Gold, n_resamples: int, seed: int, clusters) -> tuple[pd.DataFrame, pd.DataFrame]:
    recs = []
    ind = {c: indicators(k, t, g) for c, (k, t) in columns.items()}
    for metric in next(iter(ind.values())):
        rec = {"metric": metric}
        for c, d in ind.items():
            num, den = d[metric]
            rec[f"{c}_count"], rec[f"{c}_of"] = int(num.sum()), int(den.sum())
            rec[c] = num.sum() / den.sum()
        recs.append(rec)
    w = cluster_weights(clusters, n_resamples, seed)
    names = list(columns)
    diffs = []
    for a, b in [(names[-1], n) for n in names[:-1]]:
        for metric in ind[a]:
            (na, da), (nb, db) = ind[a][metric], ind[b][metric]
            ra, rb = (w @ na) / (w @ da), (w @ nb) / (w @ db)
            lo, hi = np.quantile(ra - rb, [0.025, 0.975])
            diffs.append({"metric": metric, "a": a, "b": b, "difference": na.sum() / da.sum() - nb.sum() / db.sum(),
                          "ci_low": lo, "ci_high": hi})
    table = pd.DataFrame(recs)
    if g.mutating is None:  # the row stays, saying why it has no value (never a silent 0); counts stay integers
        table = pd.concat([table.iloc[:1], pd.DataFrame([{"metric": "mutating_false_positive", "note": MUTATING_NOTE}]),
                           table.iloc[1:]], ignore_index=True)
        counts = [c for c in table if c.endswith(("_count", "_of"))]
        table[counts] = table[counts].astype("Int64")
    return table, pd.DataFrame(diffs)


# ----------------------------------------------------------------------------- study
def gate_probability(signals: pd.DataFrame, rows, gate: Signal) -> tuple[np.ndarray, np.ndarray]:
    """(Platt-calibrated out-of-fold gate probability, fold id) aligned with rows."""
    sig = signal_rows(signals, rows)
    fold = sig["fold"].to_numpy()
    return calibrate_oof(sig[gate.name].to_numpy(), sig["in_catalog"].to_numpy(), fold, "platt"), fold


def write_baselines(exp):
    """``exp.input``: named ``lexical`` (its score matrix) and ``signals`` (signals.csv), besides the data."""
    catalog, study = exp.catalog, exp.study
    rows = exp.main  # the mismatch_hard slice stays out of this study
    budget, grid, resamples, seed = study.gate.danger_budget, study.routing.grid, study.gate.resamples, study.run.seed
    g, lexical, signals = Gold(rows, catalog), load_scores(exp.input.lexical), pd.read_csv(exp.input.signals)
    gate = gate_signal(study.signals, study.routing.gate)
    oof = gate_probability(signals, rows, gate)
    lk, lt, lch = study_ladder(lexical, rows, g, signals, study)
    gk, gt, gch = gated(lexical, rows, g, oof, budget, grid)
    columns = {"standalone_bm25": standalone(lexical, rows)} if has_routes(lexical.tool_ids) else {}
    columns.update({"single_pool_ladder": (lk, lt), "gated": (gk, gt)})
    table, diffs = baselines_frame(columns, g, resamples, seed, np.array([r["utterance_id"] for r in rows]))
    for _, d in diffs.iterrows():
        key = f"{d['a']}_minus_{d['b']}"
        m = table["metric"] == d["metric"]
        table.loc[m, key] = d["difference"]
        table.loc[m, f"{key}_ci_low"] = d["ci_low"]
        table.loc[m, f"{key}_ci_high"] = d["ci_high"]
    log.info("ladder (lo, hi) per fold: %s; gate '%s' (Platt) threshold per fold: %s",
             {k: tuple(round(float(x), 4) for x in v) for k, v in lch.items()}, study.routing.gate,
             {k: round(float(v), 4) for k, v in gch.items()})
    note = f"Thresholds out of fold, per fold in the log. docs/metrics.md, 'Routing baselines'. {mode_note(rows)}"
    if not has_routes(lexical.tool_ids):
        note += f" No standalone column. {ROUTE_NOTE}"
    write_table(table, exp.output[0], "Routing baselines and the split gate (paper Table 1)", note, seed, paper=("routing.",))
    return table
