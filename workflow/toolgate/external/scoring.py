"""Scoring an external set: each row over its own candidates, each distinct request once.

Each ranker is fitted once on the whole catalog of a set (index text
``toolgate.core.catalog.index_text`` with the set's one language), every distinct
request is scored once, and each row keeps only its own candidates' columns:
the sets give every row its own candidate list, so a shared score matrix
(``toolgate.core.scores.Scores``) does not apply. Results are memoised on the set
as per-row lists, so a subset (``ExternalSet.subset``) reuses them.
"""
from __future__ import annotations

import json
import logging
import time

import numpy as np

from ..config import Run
from ..core.catalog import index_text
from ..core.rankers import RankerSpec, build_ranker, query_embeddings
from ..core.scores import top_order
from .adapters import ExternalSet

log = logging.getLogger(__name__)


def _texts(ext: ExternalSet) -> list[str]:
    """The set's distinct request texts, in order of first appearance: what is scored and encoded."""
    return list(dict.fromkeys(u["text"] for u in ext.utterances))


def row_scores(ext: ExternalSet, spec: dict, run: Run) -> list[np.ndarray]:
    """Each row's scores over its own candidates, in candidate order.

    The ranker is fitted once on the index texts of the whole catalog of the
    set (``spec["variant"]``, the set's language); each distinct request text
    is scored once. Memoised on ``ext`` per (spec, ngram, pad).
    """
    ngram, pad = run.text.ngram, run.text.pad
    key = json.dumps([spec, ngram, pad], sort_keys=True)
    if key not in ext._scores:
        t0 = time.perf_counter()
        docs = [index_text(t, spec.get("variant", "E0"), (ext.lang,)) for t in ext.catalog]
        if RankerSpec.of(spec).lexical:  # every catalog entry is a document (duplicates count in the idf)
            col = {t["id"]: j for j, t in enumerate(ext.catalog)}
        else:  # an encoder gives equal texts equal vectors: encode each distinct text once
            pos = {d: i for i, d in enumerate(dict.fromkeys(docs))}
            col = {t["id"]: pos[d] for t, d in zip(ext.catalog, docs)}
            docs = list(pos)
        texts = _texts(ext)
        qrow = {t: i for i, t in enumerate(texts)}
        full = np.asarray(build_ranker(spec, ngram, pad, run.cache).fit(docs).score_many(texts), float)
        ext._scores[key] = [full[qrow[u["text"]], [col[c] for c in cands]]
                            for u, cands in zip(ext.utterances, ext.candidates)]
        log.info("%s: %s scored %d texts x %d tools in %.1f s", ext.dataset, RankerSpec.of(spec).kind, len(texts),
                 len(docs), time.perf_counter() - t0)
    return ext._scores[key]


def row_embeddings(ext: ExternalSet, spec: dict, run: Run) -> np.ndarray:
    """(rows x dim) each row's request embedding of a dense ranker, from the cache its scores filled.

    Memoised on ``ext`` as per-row vectors, so a subset keeps them (its text list would miss the cache).
    """
    key = json.dumps(["request embeddings", spec], sort_keys=True)
    if key not in ext._scores:
        texts = _texts(ext)
        emb = query_embeddings(spec, texts, run)
        qrow = {t: i for i, t in enumerate(texts)}
        ext._scores[key] = [emb[qrow[u["text"]]] for u in ext.utterances]
    return np.vstack(ext._scores[key])


def padded(rows: list[np.ndarray]) -> np.ndarray:
    """Per-row scores over each row's own candidates as one matrix, ``-inf`` past a row's last candidate
    (the score matrix's mark of a tool the request does not see, :mod:`toolgate.core.scores`)."""
    out = np.full((len(rows), max(len(r) for r in rows)), -np.inf)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


def top1(scores: list[np.ndarray], candidates: list[list[str]]) -> list[str]:
    """Predicted tool per row: the best-scoring candidate; ties go to the earlier candidate."""
    return [c[int(top_order(s, 1)[0])] for s, c in zip(scores, candidates)]
