"""Gate study v2: every compared gate against G3 and against the best single encoder (gate_comparison.csv).

AUROC, FPR at 95% TPR and best coverage on every slice, each difference with its paired cluster-bootstrap interval
(docs/metrics.md, 'Gate comparison').
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..config import Gate, Run
from ..core.scores import Scores, load_scores, route_step, top_actions
from ..core.signals import Signal, compared_gates, of_kind, signal_rows
from ..metrics import weighted_auc, weighted_fpr_at_tpr
from ..tables import write_table
from .bootstrap import Resamples, paired_differences
from .operating import best_coverage, outcomes, weighted_sweep
from .study import study_masks

console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log
HIGHER_IS_BETTER = {"auroc": True, "fpr_at_95tpr": False, "best_coverage": True}


def measures(parts, budget: float) -> dict:
    """Each measure as (name, function(scores, y, weights)); ``parts``: the slice's :func:`operating.outcomes`."""
    def coverage(score, y, w):
        _, danger, cov, _ = weighted_sweep(np.asarray(score, float), parts, w)
        best = best_coverage(danger, cov, budget)
        return best if np.ndim(w) > 1 else float(best[0])

    return {"auroc": ("auroc", weighted_auc), "fpr_at_95tpr": ("fpr_at_95tpr", weighted_fpr_at_tpr),
            "best_coverage": ("best_coverage", coverage)}


def verdict(difference_ci: tuple[float, float], higher_is_better: bool) -> str:
    """'better', 'worse', or 'within' (the interval contains 0), reading the measure's direction."""
    lo, hi = difference_ci
    if np.isnan(lo):
        return ""
    if lo <= 0 <= hi:
        return "within"
    return "better" if (lo > 0) == higher_is_better else "worse"


def _rows(diff: pd.DataFrame, name: str, gates, ref: str, best: str, higher: bool) -> list[dict]:
    """One record per gate: its value, and its differences from G3 and from the best encoder."""
    point = dict(zip(diff["a"], diff[f"{name}_a"])) | dict(zip(diff["b"], diff[f"{name}_b"]))
    by = {(r.a, r.b): r for r in diff.itertuples()}
    recs = []
    for g in gates:
        rec = {"gate": g, "value": point[g], "g3": point[ref], "best_encoder": best, "best_encoder_value": point[best]}
        for key, other in (("minus_g3", ref), ("minus_best", best)):
            r = by.get((g, other))
            ci = (r.ci_low, r.ci_high) if r else (np.nan, np.nan)
            rec |= {key: r.difference if r else np.nan, f"{key}_ci_low": ci[0], f"{key}_ci_high": ci[1],
                    f"{key}_verdict": verdict(ci, higher)}
        recs.append(rec)
    return recs


def comparison_frame(rows, lexical: Scores, signals: pd.DataFrame, reg: dict[str, Signal], gate: Gate,
                     run: Run) -> pd.DataFrame:
    sig = signal_rows(signals, rows).reset_index(drop=True)
    y = sig["in_catalog"].to_numpy()
    masks = study_masks(rows, sig["length"].to_numpy(), y, run.seed)
    parts = outcomes(rows, top_actions(lexical, rows)[:, 0], route_step(lexical, rows))
    gates, encoders = compared_gates(reg), of_kind(reg, "encoder")
    if not encoders:  # nothing beside G3 to compare
        return pd.DataFrame(columns=["cluster_unit", "slice", "measure", "gate"])
    recs = []
    for unit in gate.cluster_units:
        for sl, m in masks.items():
            if len(np.unique(y[m])) < 2:  # e.g. a catalog without mismatch items: nothing to separate
                continue
            console.info("%s clusters, slice %s: %d gates, paired differences (%d resamples)", unit, sl, len(gates),
                         gate.resamples)
            sub, clusters = sig[m], sig.loc[m, "utterance_id" if unit == "utterance" else "pair_id"].to_numpy()
            for measure, (name, fn) in measures(tuple(p[m] for p in parts), gate.danger_budget).items():
                higher = HIGHER_IS_BETTER[measure]
                values = {e: fn(sub[e].to_numpy(), y[m], np.ones(int(m.sum()))) for e in encoders}
                best = sorted(encoders, key=lambda e: -values[e] if higher else values[e])[0]  # ties: the first
                diffs = [(g, "g3") for g in gates if g != "g3"] + [(g, best) for g in gates if g != best]
                diff = paired_differences(sub, y[m], clusters, diffs, Resamples(gate.resamples, run.seed),
                                          metric=(name, fn))
                head = {"cluster_unit": unit, "slice": sl, "measure": measure, "n_in": int(y[m].sum()),
                        "n_out": int((y[m] == 0).sum())}
                recs += [head | r for r in _rows(diff, name, gates, "g3", best, higher)]
    return pd.DataFrame(recs)


def write_gate_comparison(exp) -> pd.DataFrame:
    """tables/gate_comparison.csv over the experiment's utterances, with the ``lexical`` input's scores."""
    gate = exp.gate
    table = comparison_frame(exp.rows, load_scores(exp.input.lexical), pd.read_csv(exp.input.signals), exp.signals,
                             gate, exp.run)
    write_table(table, exp.output.table, "Gate study v2: each gate against G3 and the best single encoder",
                f"Slices as in gate_auc.csv; best_coverage under danger <= {gate.danger_budget}. minus_*: against G3 "
                f"and the best encoder gate, {gate.resamples} paired cluster resamples; *_verdict: better / worse when "
                "the interval excludes 0. docs/metrics.md, 'Gate comparison'.", exp.seed)
    return table
