"""Rankers behind one interface: ``fit(documents)`` then ``score_many(queries)``; kinds ``bm25``, ``dense``,
``hybrid`` and ``maxsim`` (ColBERT-style late interaction; the bundled MiniLM is not ColBERT-trained, so its MaxSim
numbers show the code path, not ColBERT quality).

:data:`RANKERS` is the one place that knows the kinds (builder and capabilities); other stages ask a
:class:`RankerSpec` and never compare ``type`` strings. A new kind is a :class:`Ranker` class, one registry line and
its schema entry.
"""
from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from . import bm25 as _bm25
from . import schemas
from .catalog import index_text
from .embedding_cache import PER_TEXT, CachedEncoder
from .encoders import BACKENDS, make_encoder
from .fusion import HybridRanker
from .text import Terms


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
    def type(self) -> "RankerType":
        return ranker_type(self.kind)

    @property
    def lexical(self) -> bool:
        """BM25: scores every catalog entry (routes too); the route step and the lexical role read it."""
        return self.type.lexical

    @property
    def embeds(self) -> bool:
        """Runs an encoder (``entry["encoder"]``): dense or late interaction."""
        return self.type.embeds

    @property
    def encoder_gate(self) -> bool:
        """One embedding per text: a max-cosine gate signal, request embeddings, quantisation and timing."""
        return self.type.encoder_gate

    @property
    def hybrid(self) -> bool:
        """Fuses other rankers' scores (:mod:`toolgate.retrieval.hybrid`): no model of its own, no route scores."""
        return self.type.hybrid

    @property
    def members(self) -> tuple[str, ...]:
        return tuple(self.entry["members"]) if self.hybrid else ()


def per_text_rankers(rankers: dict) -> dict[str, dict]:
    """The dense rankers whose encoder caches per text, by name (their texts can be embedded ahead, in shards:
    rule ``embed_external``)."""
    specs = {n: RankerSpec.of(e) for n, e in rankers.items()}
    return {n: s.entry for n, s in specs.items() if s.encoder_gate and s.entry["encoder"]["backend"] in PER_TEXT}


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


class Ranker(Protocol):
    """What a ranker of :data:`RANKERS` does: fitted on the catalog's index texts, it scores requests against
    them (a matrix for many, a row for one) and tells its bytes on disk (the cost benchmark's size column).
    :class:`~toolgate.core.fusion.HybridRanker` scores and sizes the same way, fused from fitted members."""

    def fit(self, docs) -> "Ranker": ...

    def score_many(self, queries) -> np.ndarray: ...

    def score(self, query) -> np.ndarray: ...

    def size_bytes(self) -> int: ...


@dataclass(frozen=True)
class Build:
    """What a builder reads besides the entry: the character n-gram settings, the embedding cache and whether
    queries go through it (see :class:`DenseRanker`)."""
    ngram: int
    pad: bool
    cache_dir: str | None = None
    cache_queries: bool = True


class BM25Ranker:
    def __init__(self, index: _bm25.BM25):
        self.index = index

    @classmethod
    def from_spec(cls, spec: dict, text) -> "BM25Ranker":
        """Unfitted, of an entry's BM25 settings (BM25's defaults for those a hand-written router manifest leaves
        out) and ``text``'s n-gram settings (``ngram``, ``pad``)."""
        return cls(_bm25.BM25(**{k: spec[k] for k in ("k1", "b", "idf", "epsilon") if k in spec},
                              terms=Terms(spec.get("tokenizer", Terms.tokenizer), text.ngram, text.pad)))

    def fit(self, docs):
        self.index.fit(docs)
        return self

    def score_many(self, queries):
        return self.index.score_many(list(queries))

    def score(self, query):
        return self.index.score(query)

    def size_bytes(self) -> int:
        return len(self.index.to_bytes())


class DenseRanker:
    """``cache_queries=False``: documents through the cache, queries always encoded (what a timing needs)."""

    def __init__(self, encoder, cache_dir=None, cache_queries: bool = True):
        cached = CachedEncoder(encoder, cache_dir) if cache_dir else encoder
        self.raw, self.doc_encoder = encoder, cached
        self.encoder = cached if cache_queries else encoder

    @classmethod
    def from_spec(cls, spec: dict, build: Build) -> "DenseRanker":
        return cls(_encoder(spec, build), build.cache_dir, build.cache_queries)

    def fit(self, docs):
        self.docs = self.doc_encoder.encode_documents(list(docs))
        return self

    def score_many(self, queries):
        return self.encoder.encode_queries(list(queries)) @ self.docs.T

    def score(self, query):
        return (self.raw.encode_queries([query]) @ self.docs.T)[0]

    def size_bytes(self) -> int:
        return self.raw.size_bytes()


class MaxSimRanker:
    def __init__(self, encoder):
        if not hasattr(encoder, "token_embeddings"):
            raise ValueError(f"maxsim needs token embeddings; backend '{encoder.backend}' has none (use sentence-transformers)")
        self.encoder = encoder

    @classmethod
    def from_spec(cls, spec: dict, build: Build) -> "MaxSimRanker":
        return cls(_encoder(spec, build))

    def fit(self, docs):
        self.docs = self.encoder.token_embeddings(list(docs), getattr(self.encoder, "document_prefix", ""))
        return self

    def score_many(self, queries):
        qs = self.encoder.token_embeddings(list(queries), getattr(self.encoder, "query_prefix", ""))
        return np.array([[float((q @ d.T).max(axis=1).sum()) for d in self.docs] for q in qs])

    def score(self, query):
        return self.score_many([query])[0]

    def size_bytes(self) -> int:
        return self.encoder.size_bytes()


@dataclass(frozen=True)
class RankerType:
    """A kind of ranker: ``build`` makes an unfitted :class:`Ranker` of an entry (None: a hybrid, fitted member by
    member in :func:`fit_ranker`) and the capabilities :class:`RankerSpec` answers with."""
    build: Callable[[dict, Build], Ranker] | None
    lexical: bool = False
    embeds: bool = False
    encoder_gate: bool = False
    hybrid: bool = False


# The config schema's rankers.*.type enum lists these names (tests/unit/retrieval/test_rankers.py holds them together).
RANKERS: dict[str, RankerType] = {
    "bm25": RankerType(BM25Ranker.from_spec, lexical=True),
    "dense": RankerType(DenseRanker.from_spec, embeds=True, encoder_gate=True),
    "maxsim": RankerType(MaxSimRanker.from_spec, embeds=True),
    "hybrid": RankerType(None, hybrid=True),
}


def kinds(capability: str) -> list[str]:
    """The type names of :data:`RANKERS` with ``capability`` (``lexical``, ``embeds``, ...), in registry order."""
    return [k for k, t in RANKERS.items() if getattr(t, capability)]


def ranker_type(kind: str) -> RankerType:
    if kind not in RANKERS:
        raise ValueError(f"unknown ranker type '{kind}' (known: {', '.join(RANKERS)})")
    return RANKERS[kind]


def encoder_kwargs(spec: dict) -> dict:
    cls = BACKENDS[spec["backend"]]
    accepted = set(inspect.signature(cls.__init__).parameters)
    if "prefixes" in accepted:  # the config's two prefix keys, paired by make_encoder
        accepted |= {"query_prefix", "document_prefix"}
    return {k: v for k, v in spec.items() if k == "backend" or k in accepted}


def _encoder(spec: dict, build: Build):
    """The encoder of an entry that embeds (``spec["encoder"]``), its downloads in ``build.cache_dir``."""
    return make_encoder(encoder_kwargs(spec["encoder"]), build.cache_dir)


def build_ranker(spec: dict, ngram: int, pad: bool, cache_dir=None, cache_queries: bool = True) -> Ranker:
    """An unfitted ranker from its config entry, by its type's builder (``cache_queries``: see :class:`DenseRanker`)."""
    r = RankerSpec.of(spec)
    if r.type.build is None:
        raise ValueError("a hybrid ranker is fitted member by member: fit_ranker(with_members(spec, rankers), ...)")
    return r.type.build(r.entry, Build(ngram, pad, cache_dir, cache_queries))


def with_members(spec: dict, rankers: dict) -> dict:
    """A ranker entry ready for :func:`build_ranker`: a hybrid carries its members' entries (``member_specs``)."""
    members = RankerSpec.of(spec).members
    return {**spec, "member_specs": [rankers[m] for m in members]} if members else spec


def size_bytes(ranker: Ranker, index_path=None) -> int:
    """A fitted ranker's bytes on disk (:meth:`Ranker.size_bytes`); a BM25 index is written to ``index_path`` too
    if given."""
    if index_path and isinstance(ranker, BM25Ranker):
        with open(index_path, "wb") as fh:
            fh.write(ranker.index.to_bytes())
    return ranker.size_bytes()


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
