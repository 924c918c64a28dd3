"""The selection evaluation over the catalog's actions (paper Table 3): top-1, top-k recall, MRR, nDCG@10, recall@5."""
from __future__ import annotations

import pandas as pd

from ..core.scores import Scores, gold_ranks, mode_note
from ..metrics import rank_metrics
from ..tables import write_table
from ..utterances import in_catalog


def by_lang_slice(df: pd.DataFrame, slices=("match", "mismatch", "all", "mismatch_hard")):
    """(lang, slice, rows of df) for each language and ``all``, each slice; empty groups skipped.

    ``all`` is the main set (match + mismatch, ask included): the extra mismatch_hard slice stands apart.
    """
    for lang in sorted(df["lang"].unique()) + ["all"]:
        for slice_ in slices:
            in_slice = (df["slice"] != "mismatch_hard") if slice_ == "all" else (df["slice"] == slice_)
            m = df[((df["lang"] == lang) | (lang == "all")) & in_slice]
            if not m.empty:
                yield lang, slice_, m


def selection_frame(rows: list[dict], named_scores: dict[str, Scores], top_k: int) -> pd.DataFrame:
    """Top-1, top-k recall, MRR, nDCG@10 and recall@5 over the actions for in-catalog utterances, by ranker x
    language x slice."""
    recs = []
    for name, s in named_scores.items():
        inrows = in_catalog(rows)
        df = pd.DataFrame({"lang": [r["lang"] for r in inrows], "slice": [r["slice"] for r in inrows],
                           "rank": gold_ranks(s, inrows)})
        for lang, slice_, m in by_lang_slice(df):
            recs.append({"ranker": name, "lang": lang, "slice": slice_, "n": len(m),
                         **rank_metrics(m["rank"].to_numpy(), top_k)})
    return pd.DataFrame(recs)


def write_selection(exp):
    """``exp.rankers``: the ranker names, in the order of their score matrices (``exp.input.scores``)."""
    rows, top_k = exp.rows, exp.top_k
    df = selection_frame(rows, {k: exp.scores(k) for k in exp.score_paths}, top_k)
    write_table(df, exp.output[0], "Selection over the catalog's actions (paper Table 3)",
                f"In-catalog utterances (gold action or ask). Route entries excluded. top{top_k} is recall at {top_k}; "
                f"ties keep catalog order. {mode_note(rows)}", exp.seed)
    return df
