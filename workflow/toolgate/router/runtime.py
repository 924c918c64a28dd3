"""Load an exported router and decide: ``Router.load(path).decide(text)``.

Every problem with an artifact or an input raises :class:`RouterError` with a
one-line message (the CLI prints it and exits 2); nothing is silently bent: an
overlong text is refused, never truncated. Every component sees the request in
one Unicode form (NFC), and the band's decision passes the evidence rules of
:mod:`.evidence` before anything is executed.
"""
from __future__ import annotations

import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .. import io
from ..config import section
from ..data.catalog import index_text
from ..errors import InputError
from ..gate.calibration import platt_probability
from ..retrieval.bm25 import BM25
from ..retrieval.rankers import BM25Ranker, fit_ranker
from ..retrieval.scores import route_choice, top_order
from ..routing.baselines import ladder_decisions
from ..routing.pipelines import band_decisions
from .artifact import RouterError, checked_file, json_type, load_encoders, read_manifest, sha256
from .evidence import Evidence
from .gates import GateRuntime

__all__ = ["Decision", "Router", "RouterError", "check_request", "decide_lines", "json_type", "line_text"]
KIND_WORDS = {"action": "act", "ask": "ask", "chat": "chat", "delegate": "delegate"}
REASONS = {"band": "the gate's band", "no_evidence": "no evidence for any action: route step",
           "multistep": "two actions in one request: delegated", "tie": "tied top candidates: asked, not executed",
           "missing_slot": "no value for a required parameter: asked"}


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


def check_request(text, max_chars: int) -> str:
    """The text in NFC, or RouterError when it is not a string, empty, longer than ``max_chars`` or holds a
    control character (:func:`toolgate.io.control_character`: C0/C1 other than tab, newline and carriage return,
    or a lone surrogate)."""
    if not isinstance(text, str):
        raise RouterError(f"request is {json_type(text)}, not a string: give the text as a string")
    if not text.strip():
        raise RouterError("empty request: give a non-empty text")
    if len(text) > max_chars:
        raise RouterError(f"request of {len(text)} characters exceeds the limit of {max_chars} "
                          "(router.max_chars); it is refused, not truncated")
    bad = io.control_character(text)
    if bad:
        raise RouterError(f"request contains control character U+{ord(bad):04X}; send plain text")
    return unicodedata.normalize("NFC", text)


class Router:
    """An exported router, ready to decide: a band (ranker, any registered gate, thresholds) or the ladder."""

    def __init__(self, manifest: dict, catalog: list[dict], lexical: BM25Ranker, encoders=None, docs=None,
                 exemplars=None):
        self.manifest, self.catalog, self.lexical = manifest, catalog, lexical
        self.encoders, self.docs, self.exemplars = encoders or {}, docs or {}, exemplars or {}
        self.ids = np.array([t["id"] for t in catalog])
        self.kinds = np.array([t["kind"] for t in catalog])
        self.actions = np.flatnonzero(self.kinds == "action")
        cal, th, p = manifest["calibrator"], manifest["thresholds"], manifest["pipeline"]
        self.coef, self.intercept = cal["coef"], cal["intercept"]
        self.t_low, self.t_high = th["confirm"], th["execute"]
        self.ranker = None if p["ranker"] == manifest["lexical"]["name"] else p["ranker"]
        self.gate = (GateRuntime(manifest["gate"], self.exemplars, section("text", manifest["text"]))
                     if p["kind"] == "band" else None)
        self.max_chars, self.top_k = manifest["limits"]["max_chars"], manifest["limits"]["top_k"]
        self.evidence = Evidence(catalog, tuple(manifest["langs"]))

    @classmethod
    def load(cls, path, catalog=None, threads: int | None = None) -> "Router":
        """The router in folder ``path``; ``catalog``: a catalog file it must have been exported from;
        ``threads``: the encoders' thread count (default: the backend's). The catalog is never re-encoded:
        its embeddings are the artifact's."""
        folder = Path(path)
        m = read_manifest(folder)
        files = m["files"]
        blob = checked_file(folder, "bm25.index", files["bm25.index"])
        cat_bytes = checked_file(folder, "catalog.jsonl", files["catalog.jsonl"])
        if catalog is not None and not Path(catalog).is_file():
            raise RouterError(f"{catalog}: no such catalog file (--catalog)")
        if catalog is not None and sha256(Path(catalog).read_bytes()) != m["catalog"]["sha256"]:
            raise RouterError(f"{catalog}: not the catalog this router was exported from "
                              f"(sha256 {m['catalog']['sha256'][:12]}..., source {m['catalog']['source']})")
        try:
            cat = io.load_catalog(folder / "catalog.jsonl", tuple(m["langs"]))
            lexical = BM25Ranker.__new__(BM25Ranker)
            lexical.index = BM25.from_bytes(blob)
        except (InputError, ValueError, KeyError, OSError) as exc:
            raise RouterError(f"{folder}: unreadable artifact ({exc})") from None
        if sha256(cat_bytes) != m["catalog"]["sha256"]:
            raise RouterError(f"{folder / 'catalog.jsonl'}: differs from the catalog named in the manifest")
        return cls(m, cat, lexical, *load_encoders(folder, m, cat, threads))

    def on_catalog(self, catalog: list[dict], langs) -> "Router":
        """This router over another catalog (an external set's tools): ranker, gate, calibrator, thresholds, limits
        and evidence rules unchanged, the BM25 index fitted on that catalog's index texts and each encoder's catalog
        embeddings made anew by the router's own encoders; a kNN gate keeps the router's exemplar index."""
        m = {**self.manifest, "langs": list(langs)}
        lexical = fit_ranker(m["lexical"]["spec"], catalog, tuple(langs), m["text"]["ngram"], m["text"]["pad"])
        docs = {n: enc.encode_documents([index_text(t, m["encoders"][n]["spec"]["variant"], tuple(langs))
                                         for t in catalog]) for n, enc in self.encoders.items()}
        return Router(m, catalog, lexical, self.encoders, docs, self.exemplars)

    def visible(self, candidates) -> np.ndarray:
        """(requests x catalog) which entries each request sees: its own candidate tool ids and every route entry;
        RouterError names an id that is not in the catalog."""
        col = {t: j for j, t in enumerate(self.ids)}
        out = np.tile(self.kinds != "action", (len(candidates), 1))
        for i, ids in enumerate(candidates):
            unknown = [t for t in ids if t not in col]
            if unknown:
                raise RouterError(f"request {i + 1}: candidate '{unknown[0]}' is not in the router's catalog")
            out[i, [col[t] for t in ids]] = True
        return out

    def check(self, text) -> str:
        """The text, or RouterError when it is not a request the router accepts (:func:`check_request`)."""
        return check_request(text, self.max_chars)

    def scores(self, texts, one: bool = False, visible: np.ndarray | None = None):
        """(lexical scores, ranker scores, raw gate signals, gate values) of checked ``texts``; ``one``: a single
        request scored alone; ``visible`` (:meth:`visible`): an entry a request does not see scores -inf, as in the
        gate study's per-request candidates. Raw signals: gate/signals.csv's columns (None for the ladder); gate
        values: the gate's log-odds or raw signal, the ladder's pool top score."""
        hide = (lambda m: m) if visible is None else (lambda m: np.where(visible, m, -np.inf))
        lex = hide(self.lexical.score(texts[0])[None] if one else np.asarray(self.lexical.score_many(list(texts))))
        queries = {}
        for name, enc in self.encoders.items():
            emb = enc.encode_queries(list(texts))
            queries[name] = (hide(emb @ self.docs[name].T), emb)
        rank = lex if self.ranker is None else queries[self.ranker][0]
        if self.gate is None:
            return lex, rank, None, lex.max(1)
        frame = self.gate.frame(texts, lex[:, self.actions], {n: (c[:, self.actions], e) for n, (c, e) in queries.items()})
        return lex, rank, frame, self.gate.values(frame)

    def decisions(self, texts, scored, seconds: float = 0.0, visible: np.ndarray | None = None) -> list[Decision]:
        """Decisions for checked ``texts`` from their :meth:`scores` (``seconds``: the time they took; ``visible``:
        the mask they were scored with)."""
        lex, rank, _, value = scored
        prob = platt_probability(value, self.coef, self.intercept)
        acts = rank[:, self.actions]
        top = top_order(acts, self.top_k)
        route = route_choice(lex, self.ids)
        if self.gate is None:
            kind, tool = ladder_decisions(lex, self.ids, self.kinds, self.t_low, self.t_high)
        else:
            kind, tool = band_decisions(prob, self.t_low, self.t_high, self.ids[self.actions][top[:, 0]], route)
        out = []
        seen = np.ones(acts.shape, bool) if visible is None else visible[:, self.actions]
        for i, t in enumerate(texts):
            k, why = self._checked(t, kind[i], str(tool[i]), acts[i], lex[i, self.actions].max(), route[i], seen[i])
            cands = [(str(self.ids[self.actions][j]), float(acts[i, j])) for j in top[i] if seen[i, j]]
            out.append(Decision(t, KIND_WORDS[k], (str(tool[i]) or None) if k in ("action", "ask") else None,
                                float(prob[i]), cands, 1000.0 * seconds / len(texts), why))
        return out

    def _checked(self, text: str, kind: str, tool: str, acts: np.ndarray, lexical_max: float, route: str, seen):
        """(kind, reason): the band's decision after the evidence rules (:mod:`.evidence`), in their order;
        ``seen``: the actions the request sees."""
        if not self.evidence.has_evidence(text, lexical_max):
            return route, "no_evidence"
        if kind not in ("action", "ask"):
            return kind, "band"
        if len(self.evidence.steps(text, lambda part: np.where(seen, self.lexical.score(part)[self.actions], 0))) > 1:
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
        scored = self.scores([text], one=True)
        return self.decisions([text], scored, time.perf_counter() - t0)[0]

    def decide_many(self, texts, candidates=None) -> list[Decision]:
        """Many requests in one batch (the way the pipeline scored them); latency is the per-request mean.
        ``candidates``: per request the tool ids it may choose from (default: the whole catalog)."""
        texts = [self.check(t) for t in texts]
        visible = None if candidates is None else self.visible(candidates)
        t0 = time.perf_counter()
        scored = self.scores(texts, visible=visible)
        return self.decisions(texts, scored, time.perf_counter() - t0, visible)


def line_text(raw: bytes):
    """The request of one ``--jsonl`` line: a JSON object with a string "text"; RouterError says what else it is."""
    try:
        line = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise RouterError(f"not UTF-8 (byte 0x{raw[exc.start]:02x} at position {exc.start})") from None
    try:
        obj = io.loads_json(line, "stdin")
    except InputError as exc:  # malformed, nested too deeply, or an integer too long to read
        why = f"field '{exc.field}': {exc.message}" if exc.field else exc.message
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
