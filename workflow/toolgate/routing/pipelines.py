"""Pipelines with a confirmation band (paper Appendix G, Table A3) and the signal-diversity test.

A pipeline pairs a ranker with a gate: p >= t_high executes the ranker's top-1,
t_low <= p < t_high asks the user to confirm the top-u, p < t_low takes the
route step. Thresholds come out of fold as in :mod:`toolgate.routing.baselines`.
"""
from __future__ import annotations

import itertools
import logging

import numpy as np
import pandas as pd

from ..config import Routing
from ..core.decisions import band_decisions
from ..core.scores import Scores, mode_note, route_note, route_step, top_actions
from ..core.signals import gate_signal
from ..stats import cluster_weights
from ..tables import write_table
from .baselines import (
    Gold,
    Study,
    baselines_frame,
    choose,
    correct,
    gate_probability,
    oof_decisions,
    quantile_grid,
    study_ladder,
)

console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log


def band_setting(ranker: Scores, routes: Scores, rows, g: Gold, gate_prob, routing: Routing):
    """(evaluate, threshold candidates, gold_in_band, chat_ok) of one (ranker, gate) pipeline; ``routes``: the scores
    whose route entries choose the route step (the lexical ranker's; an examples model's own)."""
    cands_top = top_actions(ranker, rows, routing.band_top)
    top1 = cands_top[:, 0]
    gold_in_band = (cands_top == g.tool[:, None]).any(1) & g.in_catalog
    route = route_step(routes, rows)
    chat_ok = g.chat & (route == "chat")

    def evaluate(c):
        kind, tool = band_decisions(gate_prob, c[0], c[1], top1, route)
        coverage = np.where(kind == "action", g.in_catalog & (top1 == g.tool), np.where(kind == "ask", gold_in_band, chat_ok))
        return kind, tool, {"danger": g.delegate & (kind == "action"), "coverage": coverage,
                            "accuracy": correct(kind, tool, g)}

    cands = list(itertools.combinations_with_replacement(quantile_grid(gate_prob, routing.grid), 2))
    return evaluate, cands, gold_in_band, chat_ok


def band_pipeline(ranker: Scores, lexical: Scores, rows, g: Gold, gate: tuple, study: Study):
    """(ranker, gate, band) with thresholds chosen out of fold under the study's danger budget and ask cap.

    ``gate``: (out-of-fold gate probability, fold id) aligned with ``rows``.
    """
    gate_prob, fold = gate
    routing = study.routing
    evaluate, cands, gold_in_band, chat_ok = band_setting(ranker, lexical, rows, g, gate_prob, routing)
    kind, tool, chosen = oof_decisions(evaluate, cands, fold, study.gate.danger_budget, routing.ask_cap, "coverage")
    return kind, tool, chosen, gold_in_band, chat_ok


def fit_band(scores: tuple[Scores, Scores], rows, g: Gold, gate_prob, study: Study, objective: str = "coverage"):
    """(t_low, t_high) chosen on every row at once under the study's danger budget and ask cap: the thresholds a
    deployed router ships with (``scores``: the pipeline's ranker and the lexical ranker; ``objective``: coverage,
    the paper's pipelines, or accuracy, a selected router's)."""
    routing = study.routing
    evaluate, cands, _, _ = band_setting(*scores, rows, g, gate_prob, routing)
    return choose(evaluate, cands, np.ones(len(rows), bool), study.gate.danger_budget, routing.ask_cap, objective)


def pipeline_metrics(kind, tool, g: Gold, gold_in_band, chat_ok, f: float) -> dict:
    """Expected metrics with a simulated user who approves the gold candidate with probability f."""
    band = kind == "ask"
    executed_ok = (kind == "action") & g.in_catalog & (tool == g.tool)
    # band: approved gold -> local success; any rejection delegates
    complete = np.where(band, np.where(gold_in_band, f, g.delegate.astype(float)), 0.0)
    complete = complete + executed_ok + ((kind == "chat") & g.chat) + ((kind == "delegate") & g.delegate)
    coverage = executed_ok + np.where(band, gold_in_band * f, 0.0) + ((kind == "chat") & chat_ok)
    n = g.n
    return {"accuracy": correct(kind, tool, g).mean(), "completion": complete.sum() / n,
            "coverage": coverage.sum() / n, "danger_rate": (g.delegate & (kind == "action")).sum() / n,
            "ask_rate": band.mean(), "band_size": int(band.sum()),
            "ask_band_top1": float((band & g.in_catalog & (tool == g.tool)).sum() / band.sum()) if band.any() else np.nan}


def versus_ladder(decision: tuple, ladder: tuple, g: Gold, resamples: int, seed: int, clusters) -> dict:
    """The routing guard: the single-pool ladder's accuracy, and (pipeline - ladder) accuracy with its 95% interval.

    ``decision`` and ``ladder``: (kind, tool) arrays. Through routing_baselines' own machinery, seed and clusters,
    so the resamples are that table's.
    """
    table, diffs = baselines_frame({"ladder": ladder, "pipeline": decision}, g, resamples, seed, clusters)
    d = diffs.set_index("metric").loc["accuracy"]
    return {"ladder_accuracy": table.set_index("metric").loc["accuracy", "ladder"],
            "accuracy_minus_ladder": d["difference"], "ci_low": d["ci_low"], "ci_high": d["ci_high"]}


def mcc(y_true: np.ndarray, y_pred: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Multiclass Matthews correlation under each row of ``weights`` (B x n)."""
    labels, inv = np.unique(np.r_[y_true, y_pred], return_inverse=True)
    t, p = inv[: len(y_true)], inv[len(y_true):]
    k = len(labels)
    w = np.atleast_2d(weights).astype(float)
    tk = np.stack([w[:, t == j].sum(1) for j in range(k)], 1)
    pk = np.stack([w[:, p == j].sum(1) for j in range(k)], 1)
    c = (w * (t == p)).sum(1)
    s = w.sum(1)
    num = c * s - (tk * pk).sum(1)
    den = np.sqrt(s**2 - (pk**2).sum(1)) * np.sqrt(s**2 - (tk**2).sum(1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, 0.0)


def decision_labels(kind, tool, g: Gold) -> tuple[np.ndarray, np.ndarray]:
    """(gold, predicted) labels for MCC: the tool for local decisions, else the outcome."""
    pred = np.where(np.isin(kind, ["action", "ask"]), tool, kind)
    gold = np.where(g.in_catalog, g.tool, g.outcome)
    return gold, pred


def write_pipelines(exp):
    """``exp.input``: named ``catalog``, ``utterances``, ``scores``, ``signals`` (signals.csv); ``exp.output``: named
    ``table`` and ``diversity``. The pipelines' cost is rule pipeline_cost's
    (:func:`toolgate.bench.cost.write_pipeline_cost`): only the timing holds the machine."""
    study, outputs, lexical = exp.study, exp.output, exp.lexical
    run, rt = study.run, study.routing
    budget, ask_cap, resamples, seed = study.gate.danger_budget, rt.ask_cap, study.gate.resamples, run.seed
    catalog = exp.catalog
    rows = exp.main  # the mismatch_hard slice stays out of this study
    g, signals = Gold(rows, catalog), pd.read_csv(exp.input.signals)
    scores = {n: exp.scores(n) for n in exp.score_paths}
    clusters = np.array([r["utterance_id"] for r in rows])
    lk, lt, _ = study_ladder(scores[lexical], rows, g, signals, study)
    recs, decisions = [], {}
    for name, p in rt.pipelines.items():
        console.info("pipeline %s (ranker %s, gate %s): band thresholds out of fold, ladder guard", name, p["ranker"],
                     p["gate"])
        gate = gate_probability(signals, rows, gate_signal(study.signals, p["gate"]))
        kind, tool, chosen, gold_in_band, chat_ok = band_pipeline(scores[p["ranker"]], scores[lexical], rows, g, gate,
                                                                 study)
        decisions[name] = (kind, tool, p["ranker"] == p["gate"])
        guard = versus_ladder((kind, tool), (lk, lt), g, resamples, seed, clusters)
        for f in rt.fidelities:
            m = pipeline_metrics(kind, tool, g, gold_in_band, chat_ok, f)
            # accuracy first, its ladder guard beside it, then the other metrics
            recs.append({"pipeline": name, "ranker": p["ranker"], "gate": p["gate"], "fidelity": f,
                         "accuracy": m["accuracy"], **guard, **m,
                         "danger_ok": m["danger_rate"] <= budget + 1e-12, "ask_ok": m["ask_rate"] <= ask_cap + 1e-12,
                         "thresholds_by_fold": "; ".join(f"{k}:{lo:.4f}/{hi:.4f}" for k, (lo, hi) in chosen.items())})
    table = pd.DataFrame(recs)
    write_table(table, outputs.table, "Pipelines with a confirmation band (paper Appendix G, Table A3)",
                "docs/metrics.md, 'Pipelines with a confirmation band'. "
                f"{mode_note(rows)} {route_note(scores[lexical])}".rstrip(), seed, paper=("pipelines.coverage", "pipelines.confirmation_band"))
    console.info("signal diversity (%d resamples)", resamples)
    div = signal_diversity(decisions, g, resamples, seed, clusters)
    write_table(div, outputs.diversity, "Signal diversity: shared minus split pipelines (MCC)",
                "MCC of the pre-confirmation decision (tool for local decisions, else outcome) against gold. Shared: "
                "ranker and gate are the same model; split: different.", seed,
                paper=("pipelines.signal_diversity",))
    return table


def signal_diversity(decisions: dict, g: Gold, resamples: int, seed: int, clusters) -> pd.DataFrame:
    w = cluster_weights(clusters, resamples, seed)
    full = np.ones((1, g.n))
    shared = [n for n, (_, _, s) in decisions.items() if s]
    split = [n for n, (_, _, s) in decisions.items() if not s]
    point, boot, recs = {}, {}, []
    for name, (kind, tool, _) in decisions.items():
        gold, pred = decision_labels(kind, tool, g)
        point[name], boot[name] = mcc(gold, pred, full)[0], mcc(gold, pred, w)
        recs.append({"pipeline": name, "group": "shared" if name in shared else "split", "mcc": point[name]})
    if shared and split:
        d_point = np.mean([point[n] for n in shared]) - np.mean([point[n] for n in split])
        d_boot = np.mean([boot[n] for n in shared], 0) - np.mean([boot[n] for n in split], 0)
        lo, hi = np.quantile(d_boot, [0.025, 0.975])
        verdict = "split better (hypothesis holds)" if hi < 0 else "not separated (hypothesis rejected)" if lo <= 0 else "shared better (hypothesis rejected)"
        recs.append({"pipeline": "shared - split", "group": "difference", "mcc": d_point, "ci_low": lo, "ci_high": hi,
                     "verdict": verdict})
    return pd.DataFrame(recs)
