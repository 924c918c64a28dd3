"""The score matrix: one ranker's scores of every utterance against every catalog entry, and what every stage reads
from it (gold ranks, shortlists with ties in catalog order, the route step).

A row's own ``candidates`` set every other action to ``-inf`` when rows are aligned (:meth:`Scores.for_rows`), so
every stage sees only the request's tools; route entries stay visible, and the saved matrix is the whole catalog.
"""
from __future__ import annotations

import logging
import os
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .catalog import ACTION
from .errors import InputError
from .rankers import fit_ranker

log = logging.getLogger(__name__)
console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log


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
        return np.flatnonzero(self.kinds == ACTION)

    @property
    def action_ids(self) -> np.ndarray:
        return self.tool_ids[self.actions]

    def action_scores(self) -> np.ndarray:
        return self.matrix[:, self.actions]

    def for_rows(self, rows) -> "Scores":
        """The same scores with rows in the order of ``rows`` (utterance dicts or ids).

        Utterance dicts with ``candidates`` see only those actions: the others score ``-inf``.
        """
        pos = {u: i for i, u in enumerate(self.utterance_ids)}
        idx = [pos[r["utterance_id"] if isinstance(r, dict) else r] for r in rows]
        matrix = self.matrix[idx]
        hidden = candidate_mask(rows, self.tool_ids, self.kinds)
        if hidden is not None:
            matrix[hidden] = -np.inf
        return Scores(self.utterance_ids[idx], self.tool_ids, self.kinds, matrix)


def candidate_mask(rows, tool_ids, kinds) -> np.ndarray | None:
    """(rows x tools) True where an action is outside the row's ``candidates``; None when no row has a list."""
    lists = [r.get("candidates") if isinstance(r, dict) else None for r in rows]
    if not any(lists):
        return None
    col = {t: j for j, t in enumerate(tool_ids)}
    hidden = np.broadcast_to(np.asarray(kinds) == ACTION, (len(rows), len(tool_ids))).copy()
    for i, cands in enumerate(lists):
        if cands:
            hidden[i, [col[c] for c in cands]] = False
        else:
            hidden[i] = False
    return hidden


def mode_note(rows) -> str:
    """One sentence for a table's note: which tools each request was scored against."""
    n = sum(bool(r.get("candidates")) for r in rows)
    if not n:
        return "Candidates: the whole catalog."
    sizes = [len(r["candidates"]) for r in rows if r.get("candidates")]
    return f"Candidates: each request's own list ({n} of {len(rows)}, mean {np.mean(sizes):.1f} tools)."


def save_scores(path, s: Scores) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, utterance_ids=s.utterance_ids, tool_ids=s.tool_ids, kinds=s.kinds, matrix=s.matrix)
    os.replace(tmp, path)


def load_scores(path) -> Scores:
    """A saved score matrix; one that cannot be read (cut short, edited) is an InputError naming it and the way
    back: a workflow output is remade, never mended."""
    if not Path(path).is_file():
        raise InputError(path, "no score matrix here: run snakemake to make it")
    try:
        z = np.load(path, allow_pickle=False)
        if isinstance(z, np.lib.npyio.NpzFile):
            with z:
                return Scores(*(z[k] for k in ("utterance_ids", "tool_ids", "kinds", "matrix")))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        pass
    raise InputError(path, "cannot be read as a score matrix this workflow wrote; delete it and run snakemake again")


def compute_scores(exp) -> Scores:
    """``exp.spec``: the ranker's config entry; writes its score matrix to ``exp.output[0]``."""
    catalog, rows, run, spec = exp.catalog, exp.rows, exp.run, exp.spec
    t0 = time.perf_counter()
    console.info("indexing %d catalog entries", len(catalog))
    ranker = fit_ranker(spec, catalog, run.langs, run.text, run.cache)
    console.info("indexed %d catalog entries in %.2f s; scoring %d utterances", len(catalog), time.perf_counter() - t0,
                 len(rows))
    t0 = time.perf_counter()
    s = scores_of(ranker, catalog, rows)
    console.info("scored %d utterances in %.2f s", len(rows), time.perf_counter() - t0)
    save_scores(exp.output[0], s)
    return s


def scores_of(ranker, catalog: list[dict], rows: list[dict]) -> Scores:
    """A fitted ranker's scores of every row against every catalog entry (the ranker fitted on ``catalog``)."""
    matrix = np.asarray(ranker.score_many([r["text"] for r in rows]), dtype=np.float64)
    return Scores(np.array([r["utterance_id"] for r in rows]), np.array([t["id"] for t in catalog]),
                  np.array([t["kind"] for t in catalog]), matrix)


def gold_rank(scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """1-based rank of each row's gold column; ties keep catalog order (lower index first)."""
    g = scores[np.arange(len(gold)), gold][:, None]
    idx = np.arange(scores.shape[1])[None, :]
    return 1 + (scores > g).sum(1) + ((scores == g) & (idx < gold[:, None])).sum(1)


def gold_ranks(s: Scores, rows) -> np.ndarray:
    """Rank of each in-catalog row's gold action among the actions (rows must all have a gold tool)."""
    ids = list(s.action_ids)
    return gold_rank(s.for_rows(rows).action_scores(), np.array([ids.index(r["gold_tool"]) for r in rows]))


SPLIT_MIN = 1024  # a vector at least this long is ordered by :func:`_split_order`
SAMPLE = 512  # entries of a long vector whose k-th largest bounds the vector's own k-th largest from below


def top_order(matrix: np.ndarray, k: int | None = None) -> np.ndarray:
    """Column indices by descending score, ties in column (catalog) order; the first ``k`` if given."""
    m = np.asarray(matrix)
    if m.ndim == 1 and m.size >= SPLIT_MIN:
        return _split_order(m, k)
    order = np.argsort(-m, axis=-1, kind="stable")
    return order if k is None else order[..., :k]


def _split_order(v: np.ndarray, k: int | None) -> np.ndarray:
    """``np.argsort(-v, kind="stable")[:k]`` of one vector without sorting all of it.

    A shortlist of ``k`` sorts only the entries at least as large as the k-th largest (every tie at the boundary
    included, so ties keep index order), found among the entries that reach a lower bound of it: the k-th largest
    of every ``len(v) // SAMPLE``-th entry, when at least ``k`` of those are positive and at least ``k`` entries
    reach the bound (a NaN, which partitions as the largest, can leave fewer), else every positive entry. The bound leaves about ``k``
    times the stride of candidates to partition instead of every positive entry: the shortlist was most of a
    BM25 query's time over 16,000 tools. Without ``k``, or with fewer than ``k`` positive entries, only the entries
    that are not 0 are sorted: one request's BM25 scores over a large catalog are mostly 0, and the zeros keep
    their index order between the positive and the negative entries (NaN last, where argsort puts it)."""
    if k is not None:
        sub = v[:: max(1, v.size // SAMPLE)]
        if np.count_nonzero(sub > 0) >= k:  # else the bound is not positive (or there is none): no use partitioning
            bound = np.partition(sub, sub.size - k)[sub.size - k]  # positive, or NaN: no entry reaches that
            top = np.flatnonzero(v >= bound)
            if len(top) >= k:
                return _sorted_top(v, top, k)
        pos = np.flatnonzero(v > 0)
        if len(pos) >= k:
            return _sorted_top(v, pos, k)
    zero = v == 0  # the indices of a boolean mask are found faster than those of the floats themselves
    nz = np.flatnonzero(~zero)
    ranked = nz[np.argsort(-v[nz], kind="stable")]
    n_pos = int(np.count_nonzero(v[nz] > 0))
    return np.concatenate([ranked[:n_pos], np.flatnonzero(zero), ranked[n_pos:]])[:k]


def _sorted_top(v: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` best of ``v``'s entries ``idx`` (ascending, holding the k best of all ``v``), ties in index order."""
    vals = v[idx]
    top = idx[vals >= np.partition(vals, len(vals) - k)[len(vals) - k]]
    return top[np.argsort(-v[top], kind="stable")][:k]


def top_actions(s: Scores, rows, u: int = 1) -> np.ndarray:
    """(n x u) the ranker's top-u action ids for ``rows``; ties in catalog order."""
    return s.action_ids[top_order(s.for_rows(rows).action_scores(), u)]


ROUTE_STEP_IDS = ("chat", "delegate")  # the route entries the route step chooses between


def has_routes(tool_ids) -> bool:
    """Does the catalog have the route entries the route step and the standalone pool need?"""
    return set(ROUTE_STEP_IDS) <= set(np.asarray(tool_ids).tolist())


ROUTE_NOTE = "No route entries: requests turned away are delegated."


def route_choice(matrix: np.ndarray, tool_ids) -> np.ndarray:
    """'chat' or 'delegate' per row of a (rows x catalog) matrix, whichever route entry scores higher;
    'delegate' for every row when the catalog has no route entries (:data:`ROUTE_NOTE`)."""
    if not has_routes(tool_ids):
        return np.full(len(matrix), "delegate")
    ids = list(np.asarray(tool_ids))
    return np.where(matrix[:, ids.index("chat")] > matrix[:, ids.index("delegate")], "chat", "delegate")


def route_step(lexical: Scores, rows) -> np.ndarray:
    """'chat' or 'delegate' per row, whichever route entry the lexical ranker scores higher (see route_choice)."""
    return route_choice(lexical.for_rows(rows).matrix, lexical.tool_ids)


def route_note(s: Scores) -> str:
    """The sentence a table's note carries when the route step was skipped; empty otherwise."""
    return "" if has_routes(s.tool_ids) else ROUTE_NOTE
