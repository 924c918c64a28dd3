"""Load an exported router and decide: ``Router.load(path).decide(text)``.

Every problem with an artifact or an input raises :class:`RouterError` with a
one-line message (the CLI prints it and exits 2); nothing is silently bent: an
overlong text is refused, never truncated. Every component sees the request in
one Unicode form (NFC), and the band's decision passes the evidence rules of
:mod:`.evidence` before anything is executed.
"""
from __future__ import annotations

import hashlib
import json
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .. import __version__, io, schemas
from ..data.catalog import index_text
from ..errors import InputError, MissingExtra
from ..gate.calibration import platt_probability
from ..retrieval.bm25 import BM25
from ..retrieval.encoders import ModelUnavailable, offline_problem
from ..retrieval.rankers import BM25Ranker, RankerSpec, build_ranker
from ..retrieval.scores import route_choice, top_order
from ..routing.pipelines import band_decisions
from .evidence import Evidence

FORMAT = 1
MANIFEST = "router.json"
KIND_WORDS = {"action": "act", "ask": "ask", "chat": "chat", "delegate": "delegate"}
REASONS = {"band": "the gate's band", "no_evidence": "no evidence for any action: route step",
           "multistep": "two actions in one request: delegated", "tie": "tied top candidates: asked, not executed",
           "missing_slot": "no value for a required parameter: asked"}


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
    reason: str = "band"  # which rule decided: the band, or an evidence rule that overrode it (REASONS)

    def line(self) -> str:
        head = f"{self.kind} {self.tool}" if self.tool else self.kind
        why = "" if self.reason == "band" else f"; {REASONS[self.reason]}"
        return f"{head}  (P(in catalog) {self.p_in_catalog:.3f}, {self.latency_ms:.1f} ms{why})"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["candidates"] = [{"tool": t, "score": round(float(s), 6)} for t, s in self.candidates]
        return d


def json_type(obj) -> str:
    """The JSON name of a parsed value's type (for messages about what a line or field holds)."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(obj), "a number")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _no_constant(name: str):
    raise ValueError(f"{name} is not a finite number")


def _read_manifest(folder: Path) -> dict:
    """The manifest of ``folder``, checked against ``router.schema.yaml`` and the rules the schema cannot say."""
    path = folder / MANIFEST
    if not path.is_file():
        raise RouterError(f"{folder}: no {MANIFEST}; export a router with `toolgate export`")
    try:
        m = json.loads(path.read_text(encoding="utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RouterError(f"{path}: not a router manifest ({exc})") from None
    if not isinstance(m, dict):
        raise RouterError(f"{path}: not a router manifest ({json_type(m)}, not an object)")
    if m.get("format") != FORMAT:
        raise RouterError(f"{path}: router format {m.get('format')!r}, this toolgate reads format {FORMAT}")
    if str(m.get("toolgate_version", "")).split(".")[0] != __version__.split(".")[0]:
        raise RouterError(f"{path}: exported by toolgate {m.get('toolgate_version')}, this is toolgate {__version__} "
                          "(another major version); export the router again")
    try:
        schemas.check_schema(path, None, m, "router")
    except InputError as exc:
        raise RouterError(str(exc)) from None
    th = m["thresholds"]
    if th["execute"] < th["confirm"]:
        raise RouterError(f"{path}: field 'thresholds': execute {th['execute']} is below confirm {th['confirm']}")
    for role in ("ranker_spec", "gate_spec"):
        spec = m["pipeline"][role]
        problem = offline_problem(spec["encoder"]) if "encoder" in spec else None
        if problem:
            raise RouterError(f"{path}: field 'pipeline.{role}.encoder': {problem}; a router loads offline only")
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
    """The text in NFC, or RouterError when it is not a string, empty, longer than ``max_chars`` or holds a
    C0/C1 control character other than tab, newline and carriage return, or a lone surrogate. Format characters
    (BOM, ZWJ in emoji, soft hyphen, direction marks) occur in real text and are accepted."""
    if not isinstance(text, str):
        raise RouterError(f"request is {json_type(text)}, not a string: give the text as a string")
    if not text.strip():
        raise RouterError("empty request: give a non-empty text")
    if len(text) > max_chars:
        raise RouterError(f"request of {len(text)} characters exceeds the limit of {max_chars} "
                          "(router.max_chars); it is refused, not truncated")
    bad = [c for c in text if unicodedata.category(c) in ("Cc", "Cs") and c not in "\t\n\r"]
    if bad:
        raise RouterError(f"request contains control character U+{ord(bad[0]):04X}; send plain text")
    return unicodedata.normalize("NFC", text)


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
        self.evidence = Evidence(catalog, tuple(manifest["langs"]))

    @classmethod
    def load(cls, path, catalog=None, threads: int | None = None) -> "Router":
        """The router in folder ``path``; ``catalog``: a catalog file it must have been exported from;
        ``threads``: the encoders' thread count (default: the backend's)."""
        folder = Path(path)
        m = _read_manifest(folder)
        files = m["files"]
        blob = _checked_file(folder, "bm25.index", files["bm25.index"])
        cat_bytes = _checked_file(folder, "catalog.jsonl", files["catalog.jsonl"])
        if catalog is not None and not Path(catalog).is_file():
            raise RouterError(f"{catalog}: no such catalog file (--catalog)")
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
            if RankerSpec.of(spec).lexical:
                return lexical
            docs = [index_text(t, spec["variant"], langs) for t in cat]
            if threads:
                spec = {**spec, "encoder": {**spec["encoder"], "threads": threads}}
            return build_ranker(spec, text["ngram"], text["pad"]).fit(docs)

        try:
            ranker = fitted(m["pipeline"]["ranker_spec"])
            gate = ranker if m["pipeline"]["gate"] == m["pipeline"]["ranker"] else fitted(m["pipeline"]["gate_spec"])
        except (ModelUnavailable, MissingExtra) as exc:
            raise RouterError(f"{folder}: the router's encoder does not load: {exc}") from None
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
            k, why = self._checked(t, kind[i], str(tool[i]), acts[i], lex[i, self.actions].max(), route[i])
            cands = [(str(self.ids[self.actions][j]), float(acts[i, j])) for j in top[i]]
            out.append(Decision(t, KIND_WORDS[k], str(tool[i]) if k in ("action", "ask") else None, float(prob[i]),
                                cands, 1000.0 * seconds / len(texts), why))
        return out

    def _checked(self, text: str, kind: str, tool: str, acts: np.ndarray, lexical_max: float, route: str):
        """(kind, reason): the band's decision after the evidence rules (:mod:`.evidence`), in their order."""
        if not self.evidence.has_evidence(text, lexical_max):
            return route, "no_evidence"
        if kind not in ("action", "ask"):
            return kind, "band"
        if len(self.evidence.steps(text, lambda part: self.lexical.score(part)[self.actions])) > 1:
            return "delegate", "multistep"
        if kind == "action" and len(acts) > 1 and np.sort(acts)[-2] == acts.max():
            return "ask", "tie"
        if kind == "action" and not self.evidence.fills_a_slot(text, tool):
            return "ask", "missing_slot"
        return kind, "band"

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


def line_text(raw: bytes):
    """The request of one ``--jsonl`` line: a JSON object with a string "text"; RouterError says what else it is."""
    try:
        line = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise RouterError(f"not UTF-8 (byte 0x{raw[exc.start]:02x} at position {exc.start})") from None
    try:
        obj = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise RouterError(f'not a JSON object ({why}): give {{"text": "..."}}') from None
    if not isinstance(obj, dict):
        raise RouterError(f'{json_type(obj)}, not an object: give {{"text": "..."}}')
    if "text" not in obj:
        raise RouterError('no "text" field: give {"text": "..."}')
    return obj["text"]


def decide_lines(router: Router, lines):
    """One decision (``Decision.to_dict``) or ``{"line": n, "error": ...}`` per line of bytes, in order: a bad line
    never stops the others."""
    for n, raw in enumerate(lines, start=1):
        try:
            yield router.decide(line_text(raw)).to_dict()
        except RouterError as exc:
            yield {"line": n, "error": str(exc)}
