"""Routing pipelines (paper Section 3, Table 1, Appendix G / Table A3).

Every router gives each utterance one decision: ``("action", tool)``,
``("ask", tool)`` (confirm ``tool``; the ladder's middle band), ``("chat", None)``
or ``("delegate", None)``. Nothing is executed.

A decision is **correct** when it routes the request where its gold label says:
an in-catalog utterance (gold action or ask) to its gold tool, a gold-chat
utterance to chat, a gold-delegate utterance to delegate. Slot questions and
argument values are out of scope (the paper scores tool-name routing), so an
in-catalog decision with the gold tool counts whether it executes or asks.

Thresholds are chosen out of fold with the gate study's folds (grouped by
pair): on the other folds, among a grid of quantiles of the score, the
thresholds with the best objective that satisfy the product rules; then applied
to the held-out fold. Constraints are re-checked on the pooled out-of-fold
decisions and flagged when violated.
"""
from __future__ import annotations

import itertools
import logging

import numpy as np
import pandas as pd

from . import io
from .bootstrap import cluster_weights
from .calibration import calibrate_oof
from .selection import Scores, load_scores
from .tables import write_table

log = logging.getLogger(__name__)


class Gold:
    """Gold labels as arrays aligned with the utterance rows."""

    def __init__(self, rows, catalog):
        self.outcome = np.array([r["gold_outcome"] for r in rows])
        self.tool = np.array([r["gold_tool"] or "" for r in rows])
        self.in_catalog = np.isin(self.outcome, io.IN_CATALOG)
        self.delegate = self.outcome == "delegate"
        self.chat = self.outcome == "chat"
        self.n = len(rows)
        self.mutating = {t["id"] for t in catalog if t["kind"] == "action" and t["mutating"]}


def aligned(s: Scores, rows) -> np.ndarray:
    pos = {u: i for i, u in enumerate(s.utterance_ids)}
    return s.matrix[[pos[r["utterance_id"]] for r in rows]]


def route_step(lexical: Scores, rows) -> np.ndarray:
    """'chat' or 'delegate', whichever route entry the lexical ranker scores higher."""
    m, ids = aligned(lexical, rows), list(lexical.tool_ids)
    return np.where(m[:, ids.index("chat")] > m[:, ids.index("delegate")], "chat", "delegate")


def top_actions(s: Scores, rows, u: int = 1) -> np.ndarray:
    """(n x u) the ranker's top-u action ids; ties in catalog order."""
    m = aligned(s, rows)[:, s.actions]
    order = np.argsort(-m, axis=1, kind="stable")[:, :u]
    return s.tool_ids[s.actions][order]


# ----------------------------------------------------------------------------- decision metrics
def correct(kind: np.ndarray, tool: np.ndarray, g: Gold) -> np.ndarray:
    local = np.isin(kind, ["action", "ask"])
    return np.where(g.in_catalog, local & (tool == g.tool), kind == g.outcome)


def indicators(kind, tool, g: Gold) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per-utterance (numerator, denominator) indicators of Table 1's rows."""
    executed = kind == "action"
    ones = np.ones(g.n)
    mut = np.array([t in g.mutating for t in tool])
    return {
        "delegate_to_skill": (g.delegate & executed, g.delegate.astype(float)),
        "mutating_false_positive": (executed & mut & (tool != g.tool), ones),
        "delegations": (kind == "delegate", ones),
        "accuracy": (correct(kind, tool, g), ones),
    }


# ----------------------------------------------------------------------------- baselines
def standalone(lexical: Scores, rows) -> tuple[np.ndarray, np.ndarray]:
    """Argmax over the whole pool (actions + route entries)."""
    m = aligned(lexical, rows)
    top = np.argmax(m, axis=1)
    ids, kinds = lexical.tool_ids[top], lexical.kinds[top]
    kind = np.where(kinds == "action", "action", np.where(ids == "clarify", "ask", ids))
    return kind, np.where(kinds == "action", ids, "")


def _grid(score, n):
    return np.unique(np.quantile(score, np.linspace(0, 1, n)))


def _choose(evaluate, candidates, train, budget, ask_cap, objective):
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
        cand = _choose(evaluate, candidates, fold != f, budget, ask_cap, objective)
        k, t, _ = evaluate(cand)
        kind[fold == f], tool[fold == f] = k[fold == f], t[fold == f]
        chosen[int(f)] = cand
    return kind.astype(str), tool.astype(str), chosen


def ladder(lexical: Scores, rows, g: Gold, fold, budget, grid=41):
    """Single-pool ladder on the pool's top score: execute >= hi > ask >= lo > delegate."""
    m = aligned(lexical, rows)
    top = np.argmax(m, axis=1)
    s1 = m[np.arange(len(rows)), top]
    ids, kinds = lexical.tool_ids[top], lexical.kinds[top]
    exec_kind = np.where(kinds == "action", "action", np.where(ids == "clarify", "ask", ids))
    exec_tool = np.where(kinds == "action", ids, "")

    def evaluate(c):
        lo, hi = c
        kind = np.where(s1 >= hi, exec_kind, np.where(s1 >= lo, np.where(kinds == "action", "ask", exec_kind), "delegate"))
        tool = np.where(kind == "delegate", "", exec_tool)
        return kind, tool, {"danger": g.delegate & (kind == "action"), "accuracy": correct(kind, tool, g)}

    cands = [(lo, hi) for lo, hi in itertools.combinations_with_replacement(_grid(s1, grid), 2)]
    return oof_decisions(evaluate, cands, fold, budget, 1.0, "accuracy")


def gated(lexical: Scores, rows, g: Gold, gate_prob, fold, budget, grid=41):
    """The split architecture: gate in -> lexical top-1 action; gate out -> route step."""
    top1 = top_actions(lexical, rows)[:, 0]
    route = route_step(lexical, rows)

    def evaluate(t):
        inn = gate_prob >= t
        kind = np.where(inn, "action", route)
        tool = np.where(inn, top1, "")
        return kind, tool, {"danger": g.delegate & inn, "accuracy": correct(kind, tool, g)}

    return oof_decisions(evaluate, list(_grid(gate_prob, grid)), fold, budget, 1.0, "accuracy")


def baselines_frame(columns: dict, g: Gold, n_resamples: int, seed: int, clusters) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1: rows x columns with counts and fractions; bootstrap intervals of column differences."""
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
    return pd.DataFrame(recs), pd.DataFrame(diffs)


# ----------------------------------------------------------------------------- pipelines with a confirmation band
def band_pipeline(ranker: Scores, lexical: Scores, rows, g: Gold, gate_prob, fold, budget, ask_cap, u=1, grid=21):
    """(ranker, gate, band): p >= hi executes top-1; lo <= p < hi confirms the top-u; p < lo: route step."""
    cands_top = top_actions(ranker, rows, u)
    top1 = cands_top[:, 0]
    gold_in_band = (cands_top == g.tool[:, None]).any(1) & g.in_catalog
    route = route_step(lexical, rows)
    chat_ok = g.chat & (route == "chat")

    def evaluate(c):
        lo, hi = c
        kind = np.where(gate_prob >= hi, "action", np.where(gate_prob >= lo, "ask", route))
        tool = np.where(np.isin(kind, ["action", "ask"]), top1, "")
        coverage = np.where(kind == "action", g.in_catalog & (top1 == g.tool), np.where(kind == "ask", gold_in_band, chat_ok))
        return kind, tool, {"danger": g.delegate & (kind == "action"), "coverage": coverage}

    cands = [(lo, hi) for lo, hi in itertools.combinations_with_replacement(_grid(gate_prob, grid), 2)]
    kind, tool, chosen = oof_decisions(evaluate, cands, fold, budget, ask_cap, "coverage")
    return kind, tool, chosen, gold_in_band, chat_ok


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


# ----------------------------------------------------------------------------- study
def load_inputs(catalog_path, utterances_path, langs):
    catalog = io.load_catalog(catalog_path, langs)
    return catalog, io.load_utterances(utterances_path, catalog, langs)


def gate_probability(signals: pd.DataFrame, rows, gate: str) -> tuple[np.ndarray, np.ndarray]:
    """(Platt-calibrated out-of-fold gate probability, fold id) aligned with rows."""
    pos = {u: i for i, u in enumerate(signals["utterance_id"])}
    sig = signals.iloc[[pos[r["utterance_id"]] for r in rows]]
    fold = sig["fold"].to_numpy()
    col = gate if gate in sig else f"{gate}_maxcos"
    return calibrate_oof(sig[col].to_numpy(), sig["in_catalog"].to_numpy(), fold, "platt"), fold


def write_baselines(catalog_path, utterances_path, lexical_path, signals_csv, out_csv, gate, budget, grid, resamples,
                    seed, langs=io.LANGS):
    catalog, rows = load_inputs(catalog_path, utterances_path, langs)
    g, lexical, signals = Gold(rows, catalog), load_scores(lexical_path), pd.read_csv(signals_csv)
    prob, fold = gate_probability(signals, rows, gate)
    lk, lt, lch = ladder(lexical, rows, g, fold, budget, grid)
    gk, gt, gch = gated(lexical, rows, g, prob, fold, budget, grid)
    columns = {"standalone_bm25": standalone(lexical, rows), "single_pool_ladder": (lk, lt), "gated": (gk, gt)}
    table, diffs = baselines_frame(columns, g, resamples, seed, np.array([r["utterance_id"] for r in rows]))
    for _, d in diffs.iterrows():
        key = f"{d['a']}_minus_{d['b']}"
        m = table["metric"] == d["metric"]
        table.loc[m, key] = d["difference"]
        table.loc[m, f"{key}_ci_low"] = d["ci_low"]
        table.loc[m, f"{key}_ci_high"] = d["ci_high"]
    note = (f"Out-of-fold thresholds (folds grouped by pair). Ladder (lo, hi) per fold: "
            f"{ {k: tuple(round(float(x), 4) for x in v) for k, v in lch.items()} }; gate '{gate}' (Platt, out of fold) "
            f"threshold per fold: { {k: round(float(v), 4) for k, v in gch.items()} }. Danger budget {budget}. "
            f"Intervals: {resamples} utterance-cluster bootstrap resamples, 95% percentile. The paper: delegate-to-skill "
            "134/150 -> 12/150; mutating false positives 269/600 -> 43/600; delegations 5 / 85 / 141 of 600; "
            "accuracy 0.508 (ladder) -> 0.592 (gated).")
    write_table(table, out_csv, "Routing baselines and the split gate (paper Table 1)", note, seed)
    return table


def write_pipelines(catalog_path, utterances_path, score_paths: dict, lexical, signals_csv, out_csv, diversity_csv,
                    cost_csv, pipelines: dict, rankers: dict, fidelities, budget, ask_cap, u, grid, resamples, seed,
                    langs=io.LANGS, ngram=3, pad=True, cost_queries=100, warmup=10):
    from .cost import bench_base, run_jobs

    catalog, rows = load_inputs(catalog_path, utterances_path, langs)
    g, signals = Gold(rows, catalog), pd.read_csv(signals_csv)
    scores = {n: load_scores(p) for n, p in score_paths.items()}
    base = bench_base(catalog, rows, langs, ngram, pad, cost_queries, warmup)
    recs, decisions, costs = [], {}, []
    for name, p in pipelines.items():
        prob, fold = gate_probability(signals, rows, p["gate"])
        kind, tool, chosen, gold_in_band, chat_ok = band_pipeline(scores[p["ranker"]], scores[lexical], rows, g, prob,
                                                                 fold, budget, ask_cap, u, grid)
        decisions[name] = (kind, tool, p["ranker"] == p["gate"])
        cost = run_jobs([{**base, "name": name, "impl": "pipeline", "spec": rankers[p["ranker"]],
                          "gate_spec": rankers[p["gate"]], "shared": p["ranker"] == p["gate"]}])[0]
        costs.append({"pipeline": name, "ranker": p["ranker"], "gate": p["gate"],
                      **{k: cost[k] for k in ("median_ms", "p95_ms", "batch_qps", "peak_rss_mb", "queries_timed")}})
        for f in fidelities:
            m = pipeline_metrics(kind, tool, g, gold_in_band, chat_ok, f)
            recs.append({"pipeline": name, "ranker": p["ranker"], "gate": p["gate"], "fidelity": f, **m,
                         "danger_ok": m["danger_rate"] <= budget + 1e-12, "ask_ok": m["ask_rate"] <= ask_cap + 1e-12,
                         "thresholds_by_fold": "; ".join(f"{k}:{lo:.4f}/{hi:.4f}" for k, (lo, hi) in chosen.items())})
    table = pd.DataFrame(recs)
    write_table(table, out_csv, "Pipelines with a confirmation band (paper Appendix G, Table A3)",
                f"Thresholds (t_low/t_high on the Platt-calibrated gate probability) chosen out of fold to maximise "
                f"coverage subject to danger <= {budget} and ask rate <= {ask_cap}; band confirms the top-{u}. "
                "Simulated user: approves the gold candidate with probability = fidelity, rejects others; a rejection "
                "delegates; metrics are expectations. danger_ok/ask_ok re-check the rules on the pooled out-of-fold "
                "decisions. The paper: P1 accuracy 0.645; coverage 0.628 / 0.627 / 0.607 (P3 / P1 / P2); "
                "band 38 (P2) vs 57 (P1) of 600.", seed)
    write_table(pd.DataFrame(costs), cost_csv, "CPU cost per request of each pipeline",
                "The whole decision (rank + gate; one encoding when ranker and gate share a model), models loaded, "
                "after warm-up; peak RSS of the benchmark process. A measurement: it varies run to run. "
                "The paper: P3 197.3 ms; the BGE ranker 14x P1's CPU median and 3x its memory.", seed)
    div = signal_diversity(decisions, g, resamples, seed, np.array([r["utterance_id"] for r in rows]))
    write_table(div, diversity_csv, "Signal diversity: shared minus split pipelines (MCC)",
                "MCC of the pre-confirmation decision (tool for local decisions, else outcome) against gold. Shared: "
                "ranker and gate are the same model; split: different. The paper: +0.062 [-0.013, +0.140], rejected.",
                seed)
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
