"""Score matrices of every ranker over the catalog, and the selection evaluation (paper Table 3)."""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import io
from .rankers import fit_ranker
from .tables import write_table

log = logging.getLogger(__name__)


@dataclass
class Scores:
    """One ranker's scores: rows = utterances (file order), columns = catalog tools (catalog order)."""
    utterance_ids: np.ndarray
    tool_ids: np.ndarray
    kinds: np.ndarray
    matrix: np.ndarray

    @property
    def actions(self) -> np.ndarray:
        """Column indices of the searchable actions."""
        return np.flatnonzero(self.kinds == "action")

    def action_scores(self) -> np.ndarray:
        return self.matrix[:, self.actions]


def save_scores(path, s: Scores) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, utterance_ids=s.utterance_ids, tool_ids=s.tool_ids, kinds=s.kinds, matrix=s.matrix)
    os.replace(tmp, path)


def load_scores(path) -> Scores:
    z = np.load(path, allow_pickle=False)
    return Scores(z["utterance_ids"], z["tool_ids"], z["kinds"], z["matrix"])


def compute_scores(catalog_path, utterances_path, spec: dict, out_path, langs=io.LANGS, ngram=3, pad=True,
                   cache_dir=None) -> Scores:
    catalog = io.load_catalog(catalog_path, langs)
    rows = io.load_utterances(utterances_path, catalog, langs)
    t0 = time.perf_counter()
    ranker = fit_ranker(spec, catalog, langs, ngram, pad, cache_dir)
    log.info("indexed %d catalog entries in %.2f s", len(catalog), time.perf_counter() - t0)
    t0 = time.perf_counter()
    matrix = np.asarray(ranker.score_many([r["text"] for r in rows]), dtype=np.float64)
    log.info("scored %d utterances in %.2f s", len(rows), time.perf_counter() - t0)
    s = Scores(np.array([r["utterance_id"] for r in rows]), np.array([t["id"] for t in catalog]),
               np.array([t["kind"] for t in catalog]), matrix)
    save_scores(out_path, s)
    return s


def gold_rank(scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """1-based rank of each row's gold column; ties keep catalog order (lower index first)."""
    g = scores[np.arange(len(gold)), gold][:, None]
    idx = np.arange(scores.shape[1])[None, :]
    return 1 + (scores > g).sum(1) + ((scores == g) & (idx < gold[:, None])).sum(1)


def selection_frame(rows: list[dict], named_scores: dict[str, Scores], top_k: int = 5) -> pd.DataFrame:
    """Top-1, top-k recall and MRR over the actions for in-catalog utterances, by ranker x language x slice."""
    recs = []
    for name, s in named_scores.items():
        action_ids = list(s.tool_ids[s.actions])
        pos = {u: i for i, u in enumerate(s.utterance_ids)}
        inrows = [r for r in rows if r["gold_tool"] is not None]
        sub = s.action_scores()[[pos[r["utterance_id"]] for r in inrows]]
        ranks = gold_rank(sub, np.array([action_ids.index(r["gold_tool"]) for r in inrows]))
        df = pd.DataFrame({"lang": [r["lang"] for r in inrows], "slice": [r["slice"] for r in inrows], "rank": ranks})
        for lang in sorted(df["lang"].unique()) + ["all"]:
            for slice_ in ["match", "mismatch", "all"]:
                m = df[((df["lang"] == lang) | (lang == "all")) & ((df["slice"] == slice_) | (slice_ == "all"))]
                if m.empty:
                    continue
                r = m["rank"].to_numpy()
                recs.append({"ranker": name, "lang": lang, "slice": slice_, "n": len(r),
                             "top1": float((r == 1).mean()), f"top{top_k}": float((r <= top_k).mean()),
                             "mrr": float((1.0 / r).mean())})
    return pd.DataFrame(recs)


def write_selection(catalog_path, utterances_path, score_paths: dict, out_csv, top_k=5, langs=io.LANGS, seed=None):
    catalog = io.load_catalog(catalog_path, langs)
    rows = io.load_utterances(utterances_path, catalog, langs)
    df = selection_frame(rows, {k: load_scores(v) for k, v in score_paths.items()}, top_k)
    write_table(df, out_csv, "Selection over the catalog's actions (paper Table 3)",
                f"In-catalog utterances (gold action or ask). Route entries excluded. top{top_k} is recall at {top_k}; "
                "ties keep catalog order.", seed)
    return df
