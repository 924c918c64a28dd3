"""Reranking the lexical top-k shortlist with another ranker (paper Section 6).

recovered share = (top1_reranked - top1_lexical) / (topk_lexical - top1_lexical):
the part of the gap between the lexical ranker's top-1 accuracy and its top-k
recall that reranking closes.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.scores import Scores, load_scores, mode_note, top_order
from ..tables import write_table
from ..utterances import in_catalog
from .selection import by_lang_slice


def rerank_top1(lexical: np.ndarray, reranker: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(shortlist columns, reranked top-1 column) per row. Ties keep the lexical order."""
    shortlist = top_order(lexical, k)
    within = np.take_along_axis(reranker, shortlist, axis=1)
    best = np.argmax(within, axis=1)  # first maximum = best lexical position among ties
    return shortlist, shortlist[np.arange(len(best)), best]


def rerank_frame(rows, lexical: Scores, rerankers: dict[str, Scores], k: int) -> pd.DataFrame:
    inrows = in_catalog(rows)
    actions = list(lexical.action_ids)
    gold = np.array([actions.index(r["gold_tool"]) for r in inrows])
    lex = lexical.for_rows(inrows).action_scores()
    shortlist, _ = rerank_top1(lex, lex, k)
    lex_top1 = shortlist[:, 0] == gold
    lex_topk = (shortlist == gold[:, None]).any(1)
    recs = []
    for name, s in rerankers.items():
        assert list(s.utterance_ids) == list(lexical.utterance_ids), f"{name}: utterances differ from the lexical scores"
        _, top1 = rerank_top1(lex, s.for_rows(inrows).action_scores(), k)
        rr = top1 == gold
        frame = pd.DataFrame({"lang": [r["lang"] for r in inrows], "slice": [r["slice"] for r in inrows],
                              "a": lex_top1, "b": lex_topk, "c": rr})
        for lang, slice_, m in by_lang_slice(frame):
            a, b, c = m["a"].mean(), m["b"].mean(), m["c"].mean()
            recs.append({"reranker": name, "lang": lang, "slice": slice_, "n": len(m), "top1_lexical": a,
                         f"top{k}_lexical": b, "top1_reranked": c,
                         "recovered_share": (c - a) / (b - a) if b > a else float("nan")})
    return pd.DataFrame(recs)


def write_rerank(exp):
    """``exp.input``: ``lexical``, the lexical ranker's scores, and ``rerankers``, those of ``exp.rerankers``."""
    rows, k, lexical = exp.rows, exp.top_k, load_scores(exp.input.lexical)
    df = rerank_frame(rows, lexical, {n: load_scores(p) for n, p in zip(exp.rerankers, exp.input.rerankers)}, k)
    write_table(df, exp.output[0], f"Reranking the lexical top-{k} shortlist",
                "recovered_share = (top1_reranked - top1_lexical) / (topk_lexical - top1_lexical). " + mode_note(rows),
                exp.seed,
                paper=("rerank.",))
    return df
