"""Load an exported router and decide: ``Router.load(path).decide(text)``.

Every problem with an artifact or an input raises :class:`RouterError` with a
one-line message (the CLI prints it and exits 2); nothing is silently bent: an
overlong text is refused, never truncated.
"""
from __future__ import annotations

import hashlib
import json
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .. import __version__, io
from ..bm25 import BM25
from ..calibration import platt_probability
from ..catalog import index_text
from ..errors import InputError
from ..pipelines import band_decisions
from ..rankers import BM25Ranker, build_ranker
from ..scores import route_choice, top_order

FORMAT = 1
MANIFEST = "router.json"
KIND_WORDS = {"action": "act", "ask": "ask", "chat": "chat", "delegate": "delegate"}


class RouterError(ValueError):
    """A router artifact or an input the router refuses; the message says which and why."""


@dataclass(frozen=True)
class Decision:
    """One routing decision: ``kind`` is act / ask / delegate / chat; ``tool`` is set for act and ask."""
    text: str
    kind: str
    tool: str | None
    p_in_catalog: float
    candidates: list = field(default_factory=list)  # [(tool id, ranker score)], best first
    latency_ms: float = 0.0

    def line(self) -> str:
        head = f"{self.kind} {self.tool}" if self.tool else self.kind
        return f"{head}  (P(in catalog) {self.p_in_catalog:.3f}, {self.latency_ms:.1f} ms)"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["candidates"] = [{"tool": t, "score": round(float(s), 6)} for t, s in self.candidates]
        return d


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_manifest(folder: Path) -> dict:
    path = folder / MANIFEST
    if not path.is_file():
        raise RouterError(f"{folder}: no {MANIFEST}; export a router with `toolgate export`")
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RouterError(f"{path}: not a router manifest ({exc})") from None
    if m.get("format") != FORMAT:
        raise RouterError(f"{path}: router format {m.get('format')!r}, this toolgate reads format {FORMAT}")
    if str(m.get("toolgate_version", "")).split(".")[0] != __version__.split(".")[0]:
        raise RouterError(f"{path}: exported by toolgate {m.get('toolgate_version')}, this is toolgate {__version__} "
                          "(another major version); export the router again")
    return m


def _checked_file(folder: Path, name: str, entry: dict) -> bytes:
    path = folder / name
    if not path.is_file():
        raise RouterError(f"{path}: missing from the router artifact")
    data = path.read_bytes()
    if len(data) != entry["bytes"] or _sha256(data) != entry["sha256"]:
        raise RouterError(f"{path}: {len(data)} bytes with another checksum than the manifest's {entry['bytes']}: "
                          "the artifact is corrupted or truncated")
    return data


def check_request(text, max_chars: int) -> str:
    """The text, or RouterError when it is empty, longer than ``max_chars`` or holds control characters."""
    if not isinstance(text, str) or not text.strip():
        raise RouterError("empty request: give a non-empty text")
    if len(text) > max_chars:
        raise RouterError(f"request of {len(text)} characters exceeds the limit of {max_chars} "
                          "(router.max_chars); it is refused, not truncated")
    bad = [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs") and not c.isspace()]
    if bad:
        raise RouterError(f"request contains control character U+{ord(bad[0]):04X}; send plain text")
    return text


class Router:
    """An exported (ranker, gate, band) pipeline, ready to decide."""

    def __init__(self, manifest: dict, catalog: list[dict], lexical: BM25Ranker, ranker, gate):
        self.manifest, self.catalog = manifest, catalog
        self.lexical, self.ranker, self.gate = lexical, ranker, gate
        self.ids = np.array([t["id"] for t in catalog])
        self.actions = np.flatnonzero(np.array([t["kind"] == "action" for t in catalog]))
        cal, th = manifest["calibrator"], manifest["thresholds"]
        self.coef, self.intercept = cal["coef"], cal["intercept"]
        self.t_low, self.t_high = th["confirm"], th["execute"]
        self.max_chars, self.top_k = manifest["limits"]["max_chars"], manifest["limits"]["top_k"]

    @classmethod
    def load(cls, path, catalog=None, threads: int | None = None) -> "Router":
        """The router in folder ``path``; ``catalog``: a catalog file it must have been exported from;
        ``threads``: the encoders' thread count (default: the backend's)."""
        folder = Path(path)
        m = _read_manifest(folder)
        files = m["files"]
        blob = _checked_file(folder, "bm25.index", files["bm25.index"])
        cat_bytes = _checked_file(folder, "catalog.jsonl", files["catalog.jsonl"])
        if catalog is not None and _sha256(Path(catalog).read_bytes()) != m["catalog"]["sha256"]:
            raise RouterError(f"{catalog}: not the catalog this router was exported from "
                              f"(sha256 {m['catalog']['sha256'][:12]}..., source {m['catalog']['source']})")
        langs = tuple(m["langs"])
        try:
            cat = io.load_catalog(folder / "catalog.jsonl", langs)
            lexical = BM25Ranker.__new__(BM25Ranker)
            lexical.index = BM25.from_bytes(blob)
        except (InputError, ValueError, KeyError, OSError) as exc:
            raise RouterError(f"{folder}: unreadable artifact ({exc})") from None
        if _sha256(cat_bytes) != m["catalog"]["sha256"]:
            raise RouterError(f"{folder / 'catalog.jsonl'}: differs from the catalog named in the manifest")
        text = m["text"]

        def fitted(spec):
            if spec["type"] == "bm25":
                return lexical
            docs = [index_text(t, spec["variant"], langs) for t in cat]
            if threads:
                spec = {**spec, "encoder": {**spec["encoder"], "threads": threads}}
            return build_ranker(spec, text["ngram"], text["pad"]).fit(docs)

        ranker = fitted(m["pipeline"]["ranker_spec"])
        gate = ranker if m["pipeline"]["gate"] == m["pipeline"]["ranker"] else fitted(m["pipeline"]["gate_spec"])
        return cls(m, cat, lexical, ranker, gate)

    def check(self, text) -> str:
        """The text, or RouterError when it is not a request the router accepts (:func:`check_request`)."""
        return check_request(text, self.max_chars)

    def _decisions(self, texts, rank, gate, lex, seconds) -> list[Decision]:
        prob = platt_probability(gate[:, self.actions].max(1), self.coef, self.intercept)
        acts = rank[:, self.actions]
        top = top_order(acts, self.top_k)
        route = route_choice(lex, self.ids)
        kind, tool = band_decisions(prob, self.t_low, self.t_high, self.ids[self.actions][top[:, 0]], route)
        out = []
        for i, t in enumerate(texts):
            cands = [(str(self.ids[self.actions][j]), float(acts[i, j])) for j in top[i]]
            out.append(Decision(t, KIND_WORDS[kind[i]], str(tool[i]) or None, float(prob[i]), cands,
                                1000.0 * seconds / len(texts)))
        return out

    def decide(self, text: str) -> Decision:
        """One request, scored alone; latency covers ranking, gating and the band decision."""
        text = self.check(text)
        t0 = time.perf_counter()
        lex = self.lexical.score(text)[None]
        rank = lex if self.ranker is self.lexical else np.asarray(self.ranker.score(text))[None]
        gate = rank if self.gate is self.ranker else np.asarray(self.gate.score(text))[None]
        return self._decisions([text], rank, gate, lex, time.perf_counter() - t0)[0]

    def decide_many(self, texts) -> list[Decision]:
        """Many requests in one batch (the way the pipeline scored them); latency is the per-request mean."""
        texts = [self.check(t) for t in texts]
        t0 = time.perf_counter()
        lex = np.asarray(self.lexical.score_many(texts))
        rank = lex if self.ranker is self.lexical else np.asarray(self.ranker.score_many(texts))
        gate = rank if self.gate is self.ranker else np.asarray(self.gate.score_many(texts))
        return self._decisions(texts, rank, gate, lex, time.perf_counter() - t0)
