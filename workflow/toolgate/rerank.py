"""Reranking the lexical top-k shortlist with another ranker (paper Section 6).

recovered share = (top1_reranked - top1_lexical) / (topk_lexical - top1_lexical):
the part of the gap between the lexical ranker's top-1 accuracy and its top-k
recall that reranking closes.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import io
from .selection import Scores, load_scores
from .tables import write_table


def _in_catalog(rows, s: Scores):
    pos = {u: i for i, u in enumerate(s.utterance_ids)}
    inrows = [r for r in rows if r["gold_tool"] is not None]
    return inrows, [pos[r["utterance_id"]] for r in inrows]


def rerank_top1(lexical: np.ndarray, reranker: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(shortlist columns, reranked top-1 column) per row. Ties keep the lexical order."""
    shortlist = np.argsort(-lexical, axis=1, kind="stable")[:, :k]
    within = np.take_along_axis(reranker, shortlist, axis=1)
    best = np.argmax(within, axis=1)  # first maximum = best lexical position among ties
    return shortlist, shortlist[np.arange(len(best)), best]


def rerank_frame(rows, lexical: Scores, rerankers: dict[str, Scores], k: int = 5) -> pd.DataFrame:
    inrows, idx = _in_catalog(rows, lexical)
    actions = list(lexical.tool_ids[lexical.actions])
    gold = np.array([actions.index(r["gold_tool"]) for r in inrows])
    lex = lexical.action_scores()[idx]
    shortlist, _ = rerank_top1(lex, lex, k)
    lex_top1 = shortlist[:, 0] == gold
    lex_topk = (shortlist == gold[:, None]).any(1)
    recs = []
    for name, s in rerankers.items():
        assert list(s.utterance_ids) == list(lexical.utterance_ids), f"{name}: utterances differ from the lexical scores"
        _, top1 = rerank_top1(lex, s.action_scores()[idx], k)
        rr = top1 == gold
        frame = pd.DataFrame({"lang": [r["lang"] for r in inrows], "slice": [r["slice"] for r in inrows],
                              "a": lex_top1, "b": lex_topk, "c": rr})
        for lang in sorted(frame["lang"].unique()) + ["all"]:
            for slice_ in ["match", "mismatch", "all"]:
                m = frame[((frame["lang"] == lang) | (lang == "all")) & ((frame["slice"] == slice_) | (slice_ == "all"))]
                if m.empty:
                    continue
                a, b, c = m["a"].mean(), m["b"].mean(), m["c"].mean()
                recs.append({"reranker": name, "lang": lang, "slice": slice_, "n": len(m), "top1_lexical": a,
                             f"top{k}_lexical": b, "top1_reranked": c,
                             "recovered_share": (c - a) / (b - a) if b > a else float("nan")})
    return pd.DataFrame(recs)


def write_rerank(catalog_path, utterances_path, lexical_path, reranker_paths: dict, out_csv, k=5, langs=io.LANGS, seed=None):
    catalog = io.load_catalog(catalog_path, langs)
    rows = io.load_utterances(utterances_path, catalog, langs)
    df = rerank_frame(rows, load_scores(lexical_path), {n: load_scores(p) for n, p in reranker_paths.items()}, k)
    write_table(df, out_csv, f"Reranking the lexical top-{k} shortlist",
                "recovered_share = (top1_reranked - top1_lexical) / (topk_lexical - top1_lexical); "
                "the paper reports 29.4% (e5), 60.8% (BGE) and 86.3% (native caller).", seed)
    return df
