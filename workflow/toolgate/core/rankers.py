"""Rankers behind one interface: ``fit(documents)`` then ``score_many(queries)``.

* ``bm25``: Okapi BM25 over character n-grams (:mod:`toolgate.core.bm25`).
* ``dense``: cosine between query and document embeddings of an encoder.
* ``hybrid``: other rankers fused (:mod:`toolgate.retrieval.hybrid`); built from the
  spec :func:`with_members` resolves.
* ``maxsim``: ColBERT-style late interaction: for each query token, the best
  cosine with any document token, summed over query tokens. Works with any
  sentence-transformers checkpoint; the bundled all-MiniLM-L6-v2 is not
  ColBERT-trained, so its MaxSim numbers demonstrate the code path, not ColBERT
  quality. A ColBERT checkpoint goes in the same ``encoder.model`` field.

A ranker's config entry is ``{type, variant, ...}``; see the config schema. This module is the one that
knows the kinds: every other stage asks a :class:`RankerSpec` what a ranker is (lexical, embeds, an encoder
gate, a hybrid and its members) and never compares ``type`` strings.
"""
from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass

import numpy as np

from . import bm25 as _bm25
from . import schemas
from .catalog import index_text
from .embedding_cache import CachedEncoder
from .encoders import BACKENDS, make_encoder
from .fusion import HybridRanker
from .text import Terms

KINDS = ("bm25", "dense", "maxsim", "hybrid")


def resolved(entry: dict) -> dict:
    """A ``rankers:`` entry with the schema's defaults filled (its encoder's too); a resolved config's entries
    already are, so this is for entries written by hand (tests, the Python API)."""
    out = copy.deepcopy(entry)
    schemas.fill_defaults(out, schemas.schema("config")["properties"]["rankers"]["additionalProperties"])
    return out


@dataclass(frozen=True)
class RankerSpec:
    """What a ``rankers:`` entry is. ``entry``: the entry itself (defaults filled), which builders, manifests
    and caches read."""
    entry: dict

    @classmethod
    def of(cls, entry) -> "RankerSpec":
        return entry if isinstance(entry, RankerSpec) else cls(resolved(entry))

    @property
    def kind(self) -> str:
        return self.entry["type"]

    @property
    def lexical(self) -> bool:
        """BM25: scores every catalog entry (routes too); the route step and the lexical role read it."""
        return self.kind == "bm25"

    @property
    def embeds(self) -> bool:
        """Runs an encoder (``entry["encoder"]``): dense or late interaction."""
        return self.kind in ("dense", "maxsim")

    @property
    def encoder_gate(self) -> bool:
        """One embedding per text: a max-cosine gate signal, request embeddings, quantisation and timing."""
        return self.kind == "dense"

    @property
    def hybrid(self) -> bool:
        """Fuses other rankers' scores (:mod:`toolgate.retrieval.hybrid`): no model of its own, no route scores."""
        return self.kind == "hybrid"

    @property
    def members(self) -> tuple[str, ...]:
        return tuple(self.entry["members"]) if self.hybrid else ()


def encoder_rankers(rankers: dict) -> list[str]:
    """The names of the encoder-gate rankers (``RankerSpec.encoder_gate``), in config order."""
    return [n for n, e in rankers.items() if RankerSpec.of(e).encoder_gate]


def hybrid_rankers(rankers: dict) -> dict[str, tuple[str, ...]]:
    """Each hybrid's members, by hybrid name."""
    specs = {n: RankerSpec.of(e) for n, e in rankers.items()}
    return {n: s.members for n, s in specs.items() if s.hybrid}


def single_rankers(rankers: dict) -> dict:
    """The entries that rank on their own (every kind but hybrid)."""
    return {n: e for n, e in rankers.items() if not RankerSpec.of(e).hybrid}


class BM25Ranker:
    def __init__(self, index: _bm25.BM25):
        self.index = index

    def fit(self, docs):
        self.index.fit(docs)
        return self

    def score_many(self, queries):
        return self.index.score_many(list(queries))

    def score(self, query):
        return self.index.score(query)


class DenseRanker:
    """``cache_queries=False``: documents through the cache, queries always encoded (what a timing needs)."""

    def __init__(self, encoder, cache_dir=None, cache_queries: bool = True):
        cached = CachedEncoder(encoder, cache_dir) if cache_dir else encoder
        self.raw, self.doc_encoder = encoder, cached
        self.encoder = cached if cache_queries else encoder

    def fit(self, docs):
        self.docs = self.doc_encoder.encode_documents(list(docs))
        return self

    def score_many(self, queries):
        return self.encoder.encode_queries(list(queries)) @ self.docs.T

    def score(self, query):
        return (self.raw.encode_queries([query]) @ self.docs.T)[0]


class MaxSimRanker:
    def __init__(self, encoder):
        if not hasattr(encoder, "token_embeddings"):
            raise ValueError(f"maxsim needs token embeddings; backend '{encoder.backend}' has none (use sentence-transformers)")
        self.encoder = encoder

    def fit(self, docs):
        self.docs = self.encoder.token_embeddings(list(docs), getattr(self.encoder, "document_prefix", ""))
        return self

    def score_many(self, queries):
        qs = self.encoder.token_embeddings(list(queries), getattr(self.encoder, "query_prefix", ""))
        return np.array([[float((q @ d.T).max(axis=1).sum()) for d in self.docs] for q in qs])

    def score(self, query):
        return self.score_many([query])[0]


def encoder_kwargs(spec: dict) -> dict:
    cls = BACKENDS[spec["backend"]]
    accepted = set(inspect.signature(cls.__init__).parameters)
    if "prefixes" in accepted:  # the config's two prefix keys, paired by make_encoder
        accepted |= {"query_prefix", "document_prefix"}
    return {k: v for k, v in spec.items() if k == "backend" or k in accepted}


def build_ranker(spec: dict, ngram: int, pad: bool, cache_dir=None, cache_queries: bool = True):
    """An unfitted ranker from its config entry (``cache_queries``: see :class:`DenseRanker`)."""
    spec = RankerSpec.of(spec).entry
    kind = spec["type"]
    if kind == "hybrid":
        raise ValueError("a hybrid ranker is fitted member by member: fit_ranker(with_members(spec, rankers), ...)")
    if kind == "bm25":
        return BM25Ranker(_bm25.BM25(spec["k1"], spec["b"], spec["idf"], spec["epsilon"],
                                     Terms(spec["tokenizer"], ngram, pad)))
    encoder = make_encoder(encoder_kwargs(spec["encoder"]), cache_dir)
    if kind == "dense":
        return DenseRanker(encoder, cache_dir, cache_queries)
    if kind == "maxsim":
        return MaxSimRanker(encoder)
    raise ValueError(f"unknown ranker type '{kind}' (known: {', '.join(KINDS)})")


def with_members(spec: dict, rankers: dict) -> dict:
    """A ranker entry ready for :func:`build_ranker`: a hybrid carries its members' entries (``member_specs``)."""
    members = RankerSpec.of(spec).members
    return {**spec, "member_specs": [rankers[m] for m in members]} if members else spec


def size_bytes(ranker, index_path=None) -> int:
    """A fitted ranker's bytes on disk: the serialised BM25 index (written to ``index_path`` if given), the
    encoder's model files, or a hybrid's members together."""
    if hasattr(ranker, "members"):
        return sum(size_bytes(m) for m in ranker.members)
    if isinstance(ranker, BM25Ranker):
        blob = ranker.index.to_bytes()
        if index_path:
            with open(index_path, "wb") as fh:
                fh.write(blob)
        return len(blob)
    return ranker.raw.size_bytes() if hasattr(ranker, "raw") else ranker.encoder.size_bytes()


def query_embeddings(spec: dict, texts, run) -> np.ndarray:
    """A dense ranker's request embeddings through the embedding cache its scores filled (``run.cache``).

    ``texts`` in the order the scores were computed in: the cache is keyed by the whole list.
    """
    ranker = build_ranker(spec, run.text.ngram, run.text.pad, run.cache)
    if not isinstance(ranker, DenseRanker):
        raise ValueError(f"request embeddings need a dense ranker, not '{RankerSpec.of(spec).kind}'")
    return ranker.encoder.encode_queries(list(texts))


def fit_ranker(spec: dict, catalog: list[dict], langs, text, cache_dir=None, cache_queries: bool = True):
    """A ranker fitted on every catalog entry's index text (actions and routes, catalog order); a hybrid's members
    each on their own index text. ``cache_queries=False``: only the documents go through the cache."""
    r = RankerSpec.of(spec)
    spec = r.entry
    if r.hybrid:
        return HybridRanker([fit_ranker(m, catalog, langs, text, cache_dir, cache_queries)
                             for m in spec["member_specs"]],
                            spec["method"], spec["rrf_k"])
    docs = [index_text(t, spec["variant"], langs) for t in catalog]
    return build_ranker(spec, text.ngram, text.pad, cache_dir, cache_queries).fit(docs)
