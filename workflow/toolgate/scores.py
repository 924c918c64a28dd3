"""The score matrix: one ranker's scores of every utterance against every catalog entry.

Every stage reads rankers through this module: rows aligned to an utterance list,
gold columns, top-k shortlists (ties in catalog order) and the route step.
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import io
from .config import Run
from .rankers import fit_ranker

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

    @property
    def action_ids(self) -> np.ndarray:
        return self.tool_ids[self.actions]

    def action_scores(self) -> np.ndarray:
        return self.matrix[:, self.actions]

    def for_rows(self, rows) -> "Scores":
        """The same scores with rows in the order of ``rows`` (utterance dicts or ids)."""
        pos = {u: i for i, u in enumerate(self.utterance_ids)}
        idx = [pos[r["utterance_id"] if isinstance(r, dict) else r] for r in rows]
        return Scores(self.utterance_ids[idx], self.tool_ids, self.kinds, self.matrix[idx])


def save_scores(path, s: Scores) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, utterance_ids=s.utterance_ids, tool_ids=s.tool_ids, kinds=s.kinds, matrix=s.matrix)
    os.replace(tmp, path)


def load_scores(path) -> Scores:
    z = np.load(path, allow_pickle=False)
    return Scores(z["utterance_ids"], z["tool_ids"], z["kinds"], z["matrix"])


def compute_scores(catalog_path, utterances_path, spec: dict, out_path, run: Run) -> Scores:
    catalog, rows = io.load_inputs(catalog_path, utterances_path, run.langs)
    t0 = time.perf_counter()
    ranker = fit_ranker(spec, catalog, run.langs, run.text.ngram, run.text.pad, run.cache)
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


def gold_ranks(s: Scores, rows) -> np.ndarray:
    """Rank of each in-catalog row's gold action among the actions (rows must all have a gold tool)."""
    ids = list(s.action_ids)
    return gold_rank(s.for_rows(rows).action_scores(), np.array([ids.index(r["gold_tool"]) for r in rows]))


def top_order(matrix: np.ndarray, k: int | None = None) -> np.ndarray:
    """Column indices by descending score, ties in column (catalog) order; the first ``k`` if given."""
    order = np.argsort(-matrix, axis=-1, kind="stable")
    return order if k is None else order[..., :k]


def top_actions(s: Scores, rows, u: int = 1) -> np.ndarray:
    """(n x u) the ranker's top-u action ids for ``rows``; ties in catalog order."""
    return s.action_ids[top_order(s.for_rows(rows).action_scores(), u)]


def route_step(lexical: Scores, rows) -> np.ndarray:
    """'chat' or 'delegate' per row, whichever route entry the lexical ranker scores higher."""
    m, ids = lexical.for_rows(rows).matrix, list(lexical.tool_ids)
    return np.where(m[:, ids.index("chat")] > m[:, ids.index("delegate")], "chat", "delegate")
