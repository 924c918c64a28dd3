"""Candidate-count ablation and the BM25/encoder crossover (paper Table 8, Section 8).

Candidates are restricted on the rankers' full score matrices, so the restriction is exact; ties keep catalog
order. docs/metrics.md, 'Candidate-count ablation', defines p*, ``unstable`` and the hybrids' columns.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import fit_ks
from ..core.catalog import actions
from ..core.rankers import encoder_rankers, hybrid_rankers
from ..core.scores import Scores, gold_rank, mode_note
from ..tables import write_table
from ..utterances import in_catalog
from .selection import by_lang_slice


def candidate_rank(scores: np.ndarray, gold: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Per row: the gold action's rank among itself and k - 1 random distractors (ties by catalog order)."""
    n, m = scores.shape
    if k >= m:
        return gold_rank(scores, gold)
    # the gold column and k - 1 distinct distractors: the first k of a random order of the columns, gold put first
    keys = rng.random((n, m))
    keys[np.arange(n), gold] = -np.inf
    cand = np.sort(np.argsort(keys, axis=1)[:, :k], axis=1)  # catalog order, for the ties
    return gold_rank(np.take_along_axis(scores, cand, axis=1), (cand < gold[:, None]).sum(1))


def candidate_correct(scores: np.ndarray, gold: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Per row: does the gold action win against k - 1 random distractors (ties by catalog order)?"""
    return candidate_rank(scores, gold, k, rng) == 1


def seeded_ranks(scores: np.ndarray, gold: np.ndarray, k: int, seeds: int, seed: int) -> np.ndarray:
    """(seeds x rows) gold ranks among k candidates; draw i is seeded [seed, k, i], the same sets for every ranker."""
    k = min(k, scores.shape[1])
    return np.array([candidate_rank(scores, gold, k, np.random.default_rng([seed, k, i])) for i in range(seeds)])


def in_catalog_groups(rows, actions) -> tuple[list[dict], np.ndarray, list]:
    """(in-catalog rows, their gold column among ``actions``, their by_lang_slice groups)."""
    inrows = in_catalog(rows)
    ids = list(actions)
    gold = np.array([ids.index(r["gold_tool"]) for r in inrows])
    groups = list(by_lang_slice(pd.DataFrame({"lang": [r["lang"] for r in inrows],
                                              "slice": [r["slice"] for r in inrows]})))
    return inrows, gold, groups


def ablation_frame(rows, named: dict[str, Scores], ks, seeds: int, seed: int) -> pd.DataFrame:
    inrows, gold, groups = in_catalog_groups(rows, next(iter(named.values())).action_ids)
    recs = []
    for name, s in named.items():
        a = s.for_rows(inrows).action_scores()
        for k in ks:
            acc = (seeded_ranks(a, gold, k, seeds, seed) == 1).astype(float)  # seeds x rows
            for lg, slc, m in groups:
                v = acc[:, m.index].mean(1)
                recs.append({"ranker": name, "k": k, "lang": lg, "slice": slc, "n": len(m),
                             "top1_mean": v.mean(), "top1_std": v.std(ddof=1) if seeds > 1 else 0.0, "seeds": seeds})
    return pd.DataFrame(recs)


def crossover_frame(abl: pd.DataFrame, lexical: str, encoders: list[str], hybrids: dict | None = None,
                    lang: str = "all") -> pd.DataFrame:
    """``hybrids``: hybrid name -> members; each hybrid of BM25 and a row's encoder adds its columns to that row."""
    hybrids = hybrids or {}
    columns = ["encoder", "k", "match_gap", "mismatch_gap", "mismatch_seed_std", "crossover_p", "note", "unstable"]
    columns += [f"{h}_{c}" for h in hybrids for c in ("vs_best_match", "vs_best_mismatch", "within_spread")]
    if not {"match", "mismatch"} <= set(abl["slice"]):
        return pd.DataFrame([{"encoder": e, "note": "not computable: the set has no match/mismatch split"}
                             for e in encoders], columns=columns)
    d = abl[abl["lang"] == lang].set_index(["ranker", "k", "slice"])
    recs = []
    for enc in encoders:
        for k in sorted(abl["k"].unique()):
            bm, be = d.loc[(lexical, k, "match")], d.loc[(enc, k, "match")]
            mm, me = d.loc[(lexical, k, "mismatch")], d.loc[(enc, k, "mismatch")]
            g_m, g_mm = bm["top1_mean"] - be["top1_mean"], mm["top1_mean"] - me["top1_mean"]
            sd = max(mm["top1_std"], me["top1_std"])
            p = g_mm / (g_mm - g_m) if g_mm != g_m else np.nan
            inside = bool(np.isfinite(p) and 0 <= p <= 1)
            rec = {"encoder": enc, "k": k, "match_gap": g_m, "mismatch_gap": g_mm, "mismatch_seed_std": sd,
                   "crossover_p": p if inside else np.nan,
                   "note": ("BM25 better above p" if g_m > g_mm else "BM25 better below p") if inside
                   else "no crossover in [0,1]",
                   "unstable": bool(abs(g_mm) < sd)}
            for h, members in hybrids.items():
                if {lexical, enc} <= set(members):
                    rec.update(_hybrid_columns(d, h, members, k))
            recs.append(rec)
    return pd.DataFrame(recs, columns=columns)


def _hybrid_columns(d: pd.DataFrame, hybrid: str, members, k) -> dict:
    out, within = {}, True
    for slc in ("match", "mismatch"):
        best = max((d.loc[(m, k, slc)] for m in members), key=lambda r: r["top1_mean"])
        h = d.loc[(hybrid, k, slc)]
        gap = h["top1_mean"] - best["top1_mean"]
        out[f"{hybrid}_vs_best_{slc}"] = gap
        within &= bool(gap >= -max(h["top1_std"], best["top1_std"]))
    out[f"{hybrid}_within_spread"] = within
    return out


def write_ablation(exp):
    """``exp.output``: named ``table`` and ``crossover``; ``exp.rankers``: the config's entries. The crossover compares
    BM25 with each dense ranker, and with each hybrid of the two."""
    catalog, rows, outputs, rankers = exp.catalog, exp.rows, exp.output, exp.rankers
    seeds, seed = exp.ablation.seeds, exp.seed
    ks = fit_ks(exp.ablation.ks, len(actions(catalog)))
    abl = ablation_frame(rows, {n: exp.scores(n) for n in exp.score_paths}, ks, seeds, seed)
    write_table(abl, outputs.table, "Candidate-count ablation: top-1 among k candidates",
                f"Gold + k - 1 uniform distractors, {seeds} seeds (mean, sample std). docs/metrics.md, 'Candidate-count "
                f"ablation'. {mode_note(rows)}", seed,
                paper=("language.",))
    cross = crossover_frame(abl, exp.roles.lexical, encoder_rankers(rankers), hybrid_rankers(rankers))
    write_table(cross, outputs.crossover, "Crossover match share p* between BM25 and each encoder (paper Table 8)",
                "p* = mismatch_gap / (mismatch_gap - match_gap); unstable when |mismatch_gap| < the seed std. "
                "docs/metrics.md, 'Candidate-count ablation'.", seed,
                paper=("crossover.",))
    return abl, cross
