"""Korean lexical units: the lexical ranker's BM25 under each tokenizer of ``tokenizer_ablation.variants``.

The candidate ablation's seeded draws, so the candidate sets match it; everything but the tokenizer is the
lexical ranker's. docs/metrics.md, 'Korean lexical units'.
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..config import Run, TokenizerAblation
from ..core.catalog import actions
from ..core.rankers import RankerSpec, fit_ranker
from ..core.scores import mode_note, scores_of
from ..metrics import rank_metrics
from ..retrieval.ablation import in_catalog_groups, seeded_ranks
from ..stats import percentile_interval, resampled_means
from ..tables import write_table
from ..utterances import main_set
from .scaling import sample_queries
from .timing import measure

log = logging.getLogger(__name__)
console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log

LEVEL = 0.95


def variant_cost(ranker, queries: list[str], warmup: int) -> dict:
    """Vocabulary size, serialised index size and single-query latency (scoring + ranking) of a fitted BM25 ranker."""
    stats, _ = measure(ranker.score, ranker.score_many, queries, queries, warmup)
    return {"terms": len(ranker.index.vocab), "index_bytes": len(ranker.index.to_bytes()),
            "median_ms": stats["median_ms"], "p95_ms": stats["p95_ms"]}


def group_records(ranks: dict[str, np.ndarray], clusters: np.ndarray, resamples: int, seed: int) -> list[dict]:
    """One record per variant for one group of rows: ``ranks`` maps variant -> (seeds x rows) gold ranks.

    The best variant is the one with the highest top-1 (the first listed on a tie); every variant's top-1
    and its difference from the best's get percentile intervals over the same resamples (paired).
    """
    top1 = {v: (r == 1).mean(0) for v, r in ranks.items()}  # per row: share of the draws it wins
    boot = resampled_means(top1, clusters, resamples, seed)
    best = max(top1, key=lambda v: top1[v].mean())
    recs = []
    for v, r in ranks.items():
        lo, hi = percentile_interval(boot[v], LEVEL)
        d_lo, d_hi = percentile_interval(boot[v] - boot[best], LEVEL)
        recs.append({"variant": v, "n": r.shape[1], "seeds": r.shape[0], "top1": top1[v].mean(), "top1_ci_low": lo,
                     "top1_ci_high": hi, "top1_seed_std": (r == 1).mean(1).std(ddof=1) if len(r) > 1 else 0.0,
                     **{k: x for k, x in rank_metrics(r).items() if k != "top1"}, "best": best,
                     "minus_best": top1[v].mean() - top1[best].mean(), "minus_best_ci_low": d_lo,
                     "minus_best_ci_high": d_hi})
    return recs


def tokenizer_frame(catalog, rows, spec: dict, run: Run, cfg: TokenizerAblation) -> pd.DataFrame:
    """The table: one row per (k, language, slice, variant); the cost columns repeat on each of a variant's rows."""
    if not RankerSpec.of(spec).lexical:
        raise ValueError(f"the tokenizer ablation varies a BM25 ranker; the lexical ranker is {RankerSpec.of(spec).kind}")
    n_actions = len(actions(catalog))
    ks = sorted({min(k, n_actions) for k in cfg.ks} | {n_actions}, reverse=True)
    queries = sample_queries(main_set(rows), cfg.queries, run.seed)
    inrows, gold, groups = in_catalog_groups(rows, [t["id"] for t in actions(catalog)])
    ranks, cost = {}, {}
    for v in cfg.variants:
        ranker = fit_ranker({**spec, "tokenizer": v}, catalog, run.langs, run.text)
        a = scores_of(ranker, catalog, rows).for_rows(inrows).action_scores()
        ranks[v] = {k: seeded_ranks(a, gold, k, cfg.seeds, run.seed) for k in ks}
        cost[v] = variant_cost(ranker, queries, cfg.warmup)
        console.info("%s: %d index bytes, median %.3f ms", v, cost[v]["index_bytes"], cost[v]["median_ms"])
    pairs = np.array([r["pair_id"] for r in inrows])
    recs = []
    for k in ks:
        for lang, slc, m in groups:
            idx = m.index.to_numpy()
            for rec in group_records({v: r[k][:, idx] for v, r in ranks.items()}, pairs[idx], cfg.resamples, run.seed):
                recs.append({"k": k, "lang": lang, "slice": slc, **rec, **cost[rec["variant"]]})
    return pd.DataFrame(recs)


def winner_sentences(table: pd.DataFrame, lang: str = "ko") -> list[str]:
    """Per slice (match, mismatch) and k: the best unit (units, on a tie) with its interval, and the units not
    separable from it."""
    out = []
    for k in sorted(table["k"].unique(), reverse=True):
        for slc in ("match", "mismatch"):
            d = table[(table["k"] == k) & (table["lang"] == lang) & (table["slice"] == slc)]
            if d.empty:
                continue
            b = d[d["variant"] == d["best"]].iloc[0]
            tied = list(d.loc[d["minus_best"] == 0, "variant"])
            close = d[(d["minus_best"] < 0) & (d["minus_best_ci_high"] >= 0)]
            text = (f"{lang} {slc}, {k} candidates: " + (f"{b['variant']} wins" if len(tied) == 1 else
                                                          f"{', '.join(tied)} tie for best")
                    + f", top-1 {b['top1']:.3f} [{b['top1_ci_low']:.3f}, {b['top1_ci_high']:.3f}]")
            if close.empty:
                text += "; every other unit is below it with a paired interval excluding 0."
            else:
                text += "; not separable from it (paired difference interval reaching 0): " + ", ".join(
                    f"{r.variant} {r.top1:.3f} ({r.minus_best:+.3f} [{r.minus_best_ci_low:+.3f}, "
                    f"{r.minus_best_ci_high:+.3f}])" for r in close.itertuples()) + "."
            out.append(text)
    return out or [f"No {lang} match/mismatch rows: the set has no such split in this language."]


def write_tokenizer_ablation(exp) -> pd.DataFrame:
    """``exp.spec``: the lexical ranker's config entry, whose tokenizer each variant replaces."""
    rows, run, cfg = exp.rows, exp.run, exp.tokenizer_ablation
    df = tokenizer_frame(exp.catalog, rows, exp.spec, run, cfg)
    write_table(df, exp.output.table, "Korean lexical units: BM25 by tokenizer",
                f"k: gold + k - 1 distractors, {cfg.seeds} seeded draws; {LEVEL:.0%} intervals over {cfg.resamples} "
                "pair-cluster resamples; latencies are measurements. Best units: report.md. docs/metrics.md, 'Korean "
                "lexical units'. " + mode_note(rows), run.seed)
    return df
