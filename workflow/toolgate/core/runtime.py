"""Load an exported router and decide: ``Router.load(path).decide(text)``.

Every problem with an artifact or an input raises :class:`RouterError` with a
one-line message (the CLI prints it and exits 2); nothing is silently bent: an
overlong text is refused, never truncated. Every component sees the request
normalised at one place (:func:`check_request`), and the band's decision passes the evidence rules of
:mod:`.evidence` before anything is executed.
"""
from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import io
from .artifact import (
    SEAL,
    EncoderSet,
    RouterError,
    checked_file,
    json_type,
    lexical_ranker,
    load_arrays,
    load_encoders,
    load_examples,
    read_manifest,
    text_settings,
)
from .artifact import (
    sha256 as file_sha256,
)
from .calibration import platt_probability
from .catalog import ACTION, index_text, load_catalog
from .decisions import band_decisions, ladder_decisions
from .errors import InputError
from .evidence import CLOSE, Evidence, effect, near_tie
from .examples import ExampleModel, action_matrix, examples_entry, fit_examples, log_odds, training_texts
from .gates import GateRuntime
from .lang import fold
from .mood import clauses, masked, mood, talks_about
from .rankers import BM25Ranker, fit_ranker
from .retarget import generic_bank
from .scores import route_choice, top_order

__all__ = ["Decision", "Router", "RouterError", "Rules", "check_request", "decide_lines", "json_type", "line_text"]
# The frame in which a request still asks for an action that only reads: a question about state is how one asks for
# the action that answers it (Is my storage full?), never for the one that changes that state (shared notes,
# router-reading.md); a how-to question or a complaint asks for no action, even a read-only one
ASKS_READ_ONLY = ("state_question",)
KIND_WORDS = {"action": "act", "ask": "ask", "chat": "chat", "delegate": "delegate"}
BAND_WORDS = {"ask": "between the confirm and execute thresholds: asked",  # the band's own reason, by its kind
              "clarify": "the ladder's clarify entry tops the pool: asked what the request means",
              "chat": "below the confirm threshold: route step", "delegate": "below the confirm threshold: route step"}
REASONS = {"band": "the gate's band", "no_evidence": "no evidence for any action: route step",
           "no_candidates": "no action among the request's candidates: route step",
           "multistep": "two actions in one request: delegated",
           "tie": "tied top candidates, or a runner-up of another effect within the tie margin: asked, not executed",
           "close": "candidates too close to tell apart: asked about the one the request's words name",
           "vague": "too vague to execute: asked",
           "unread": "a word typed without spaces that the rules read only in part: asked",
           "unnamed": "no word of the request names the action: asked",
           "sweeping": "a sweeping scope for a mutating action: asked",
           "missing_slot": "no value for a required parameter: asked",
           "template": "chat-template markup in the request, a prompt rather than a user's words: asked, never executed",
           "mood": "the mood model reads no command in it (a negation, prohibition, question about state, how-to, "
                   "condition, report, quotation, past event or complaint): route step, a condition delegated",
           "quoted": "every word that names the action is inside quotes (translate 'turn on wifi'): data, not an "
                     "order: route step",
           "operation": "the request's verb is another action's, over the same object: asked about that action",
           "talks_about": "talks about an action without asking for it now (a how-to or why question, a negation, the "
                          "past, a conditional): route step"}


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
        band = BAND_WORDS.get("clarify" if self.kind == "ask" and not self.tool else self.kind)  # act: none
        why = f"; {band if self.reason == 'band' else REASONS[self.reason]}" if self.kind != "act" else ""
        return f"{head}  (P(in catalog) {self.p_in_catalog:.3f}, {self.latency_ms:.1f} ms{why})"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["candidates"] = [{"tool": t, "score": round(float(s), 6)} for t, s in self.candidates]
        return d


_DIGEST = re.compile("[0-9a-fA-F]{64}")
# Chat-template tokens (and a role name right after a turn's opening token): no words of the request, and never
# markup an encoder's tokenizer reads as structure.
_TEMPLATE = re.compile(r"(?:<\|im_start\|>|<\|start_header_id\|>|<start_of_turn>)\s*(?:system|user|assistant|model)\b"
                       r"|<\|[a-z_]{1,32}\|>|</?s>|\[/?inst\]|<</?sys>>|</?(?:bos|eos|pad|unk|mask|start_of_turn|end_of_turn)>"
                       r"|\[(?:cls|sep|pad|mask|unk)\]|</?tool_call>|</?function_calls?>"
                       r"|^\s*#{2,4}\s*(?:instruction|response|input|system|user|assistant)\s*:", re.IGNORECASE | re.MULTILINE)


@lru_cache(maxsize=4096)  # a study decides the same requests once per candidate router
def _normalized(text: str) -> str:
    text = fold(text)  # "Delete a\u200bll files": all; Don’t: don't; Nеver (Cyrillic е): never
    text, tokens = _TEMPLATE.subn(" ", text)
    return " ".join(text.split()) if tokens else text


def check_request(text, max_chars: int) -> str:
    """The request as every rule and score reads it, or RouterError when it is not a string, empty, longer than
    ``max_chars`` (before and after normalising) or holds a control character (:func:`toolgate.core.io.control_character`:
    C0/C1 other than tab, newline and carriage return, or a lone surrogate).

    Normalised here and nowhere else: folded (:func:`toolgate.core.lang.fold`: NFKC as the BM25 index reads its texts,
    format characters removed, typographic quotes as ASCII ones, look-alike letters of other scripts inside a Latin
    word as the Latin letter), chat-template tokens (``</s>``, ``[INST]``, ``<|im_start|>``...) replaced by a space."""
    def overlong(n: int, when: str = "") -> RouterError:
        return RouterError(f"request of {n} characters{when} exceeds the limit of {max_chars} (router.max_chars); it "
                           "is refused, not truncated")
    if not isinstance(text, str):
        raise RouterError(f"request is {json_type(text)}, not a string: give the text as a string")
    if len(text) > max_chars:
        raise overlong(len(text))
    bad = io.control_character(text)
    if bad:
        raise RouterError(f"request contains control character U+{ord(bad):04X}; send plain text")
    text = _normalized(text)
    if not text.strip():
        raise RouterError("empty request: give a non-empty text")
    if len(text) > max_chars:  # NFKC lengthens a few characters (U+FDFA is 18 letters)
        raise overlong(len(text), " once normalised")
    return text


def pipeline_label(p: dict) -> str:
    """``ranker + gate`` of a manifest's pipeline: an examples router names its model, one without a gate the ladder."""
    return f"{p['ranker']} + {p['gate'] or ('examples' if p['kind'] == 'examples' else 'ladder')}"


@dataclass(frozen=True)
class Rules:
    """The evidence rules (:mod:`.evidence`) a band's decision passes before anything runs, over one catalog:
    ``lexical`` its BM25 ranker (for the parts of a two-step request), ``ids`` its entries and ``actions`` the
    indices of its actions, ``top_k`` the candidates read for a close call, ``tie_margin`` the near-tie margin."""
    evidence: Evidence
    lexical: object
    ids: np.ndarray
    actions: np.ndarray
    top_k: int
    tie_margin: float

    def checked(self, text: str, band: tuple, acts: np.ndarray, lexical_max: float, seen) -> tuple[str, str, str]:
        """(kind, tool, reason): the band's decision (``band``: its kind and tool, and the route step's choice) after
        the rules, in their order; ``acts``: the ranker's action scores; ``seen``: the actions the request sees."""
        kind, tool, route = band
        ev = self.evidence
        if not seen.any():
            return route, "", "no_candidates"
        if not ev.has_evidence(text, lexical_max):
            return route, "", "no_evidence"
        if kind not in ("action", "ask") or not tool:  # a route step, or the ladder's clarify entry: a question
            return kind, tool, "band"                   # about no tool, which runs nothing
        if ev.changes(tool) and talks_about(text):
            return route, "", "talks_about"
        frame, _ = mood(text)
        if frame != "command" and (not ev.reads_only(tool) or frame not in ASKS_READ_ONLY):
            return ("delegate" if frame == "conditional" else route), "", "mood"
        if ev.names(text, tool) and not ev.names(masked(text), tool):
            return route, "", "quoted"
        if len(ev.steps(text, lambda part: np.where(seen, self.lexical.score(part)[self.actions], 0))) > 1:
            return "delegate", "", "multistep"
        top = [str(a) for a in self.ids[self.actions][top_order(acts, min(len(acts), self.top_k))]]
        other = ev.operation(clauses(text), tool, top)
        if other is not None:
            return "ask", other, "operation"
        ids = self.ids[self.actions]
        close = [str(ids[j]) for j in top_order(acts, min(len(acts), self.top_k)) if near_tie(acts.max(), acts[j], CLOSE)]
        preferred = ev.preferred(text, close) if len(close) > 1 else tool
        if preferred != tool:
            return "ask", preferred, "close"
        if kind != "action":
            return kind, tool, "band"
        for rule, broken in (("tie", lambda: self.tied(acts, tool)), ("vague", lambda: ev.vague(text)),
                             ("unread", lambda: ev.unread(text)), ("unnamed", lambda: not ev.names(text, tool)),
                             ("sweeping", lambda: ev.sweeping(text, tool)),
                             ("missing_slot", lambda: ev.missing_slot(text, tool) is not None)):
            if broken():
                return "ask", tool, rule
        return kind, tool, "band"

    def tied(self, acts: np.ndarray, tool: str) -> bool:
        """An exact tie at the top, or a runner-up within the tie margin whose effect differs from the top's."""
        if len(acts) < 2:
            return False
        top, second = top_order(acts, 2)
        if acts[second] == acts[top]:
            return True
        runner_up = str(self.ids[self.actions][second])
        return effect(runner_up) != effect(tool) and near_tie(acts[top], acts[second], self.tie_margin)


class Router:
    """An exported router, ready to decide: a band (ranker, any registered gate, thresholds), an examples model
    (its encoder's class probabilities as the ranker, the top action's log-odds as the gate), or the ladder."""

    def __init__(self, manifest: dict, catalog: list[dict], lexical: BM25Ranker, encoded: EncoderSet | None = None,
                 evidence: Evidence | None = None, examples: ExampleModel | None = None):
        """``encoded``: the encoders with their catalog and exemplar embeddings (none for the ladder). ``evidence``:
        the evidence rules over this catalog, made already (they depend on the catalog and the languages alone);
        none: made here. ``examples``: the examples model of a pipeline of kind examples."""
        self.manifest, self.catalog, self.lexical = manifest, catalog, lexical
        encoded = encoded or EncoderSet()
        self.encoders, self.docs, self.exemplars = encoded.encoders, encoded.docs, encoded.exemplars
        self.ids = np.array([t["id"] for t in catalog])
        self.kinds = np.array([t["kind"] for t in catalog])
        self.actions = np.flatnonzero(self.kinds == ACTION)
        cal, th, p = manifest["calibrator"], manifest["thresholds"], manifest["pipeline"]
        self.coef, self.intercept = cal["coef"], cal["intercept"]
        self.t_low, self.t_high = th["confirm"], th["execute"]
        self.ranker = None if p["ranker"] == manifest["lexical"]["name"] else p["ranker"]
        self.text = text_settings(manifest)
        self.kind, self.examples = p["kind"], examples
        self.gate = (GateRuntime(manifest["gate"], self.exemplars, self.text)
                     if p["kind"] == "band" else None)
        # a whole number written 1000.0 is the schema's integer 1000 (JSON Schema's integer): used as one here
        self.max_chars, self.top_k = int(manifest["limits"]["max_chars"]), int(manifest["limits"]["top_k"])
        self.tie_margin = manifest["limits"].get("tie_margin", 0.0)
        self.evidence = evidence if evidence is not None else Evidence(catalog, tuple(manifest["langs"]))
        self.rules = Rules(self.evidence, lexical, self.ids, self.actions, self.top_k, self.tie_margin)

    @property
    def label(self) -> str:
        """``name: ranker + gate`` (:func:`pipeline_label`)."""
        return f"{self.manifest['pipeline']['name']}: {pipeline_label(self.manifest['pipeline'])}"

    @classmethod
    def load(cls, path, catalog=None, threads: int | None = 1, sha256: str | None = None) -> "Router":
        """The router in folder ``path``; ``catalog``: a catalog file it must have been exported from;
        ``threads``: the encoders' thread count (default 1: a single request runs on one core, as on a phone, and a
        busy machine slows it least; None: the backend's own); ``sha256``: the digest the export printed (router.json's
        seal, which covers every file): anything else is refused, a router resealed after an edit too, since a seal
        without a secret proves integrity, not origin. The catalog is never re-encoded: its embeddings are the
        artifact's. Every check passes before an encoder is made."""
        if sha256 is not None and not (isinstance(sha256, str) and _DIGEST.fullmatch(sha256)):
            raise RouterError(f"the pinned digest is {sha256!r}, not 64 hexadecimal digits: give the digest "
                              "`toolgate export` printed")
        m = read_manifest(path)
        if sha256 is not None and m[SEAL] != sha256.lower():
            raise RouterError(f"{Path(path) / 'router.json'}: digest {m[SEAL][:12]}... is not the pinned "
                              f"{sha256.lower()[:12]}...: not the router that was shipped")
        folder = Path(path)
        cat_bytes = checked_file(folder, "catalog.jsonl", m["files"]["catalog.jsonl"])
        if catalog is not None and not Path(catalog).is_file():
            raise RouterError(f"{catalog}: no such catalog file (--catalog)")
        if catalog is not None and file_sha256(Path(catalog).read_bytes()) != m["catalog"]["sha256"]:
            raise RouterError(f"{catalog}: not the catalog this router was exported from "
                              f"(sha256 {m['catalog']['sha256'][:12]}..., source {m['catalog']['source']})")
        if file_sha256(cat_bytes) != m["catalog"]["sha256"]:
            raise RouterError(f"{folder / 'catalog.jsonl'}: differs from the catalog named in the manifest")
        try:
            cat = load_catalog(folder / "catalog.jsonl", tuple(m["langs"]))
        except (InputError, OSError) as exc:
            raise RouterError(f"{folder}: unreadable artifact ({exc})") from None
        arrays = load_arrays(folder, m, cat)
        examples = load_examples(folder, m, cat, arrays) if m["pipeline"]["kind"] == "examples" else None
        lexical = lexical_ranker(folder, m, cat)
        return cls(m, cat, lexical, load_encoders(folder, m, cat, arrays, threads), examples=examples)

    def on_catalog(self, catalog: list[dict], langs, lexical=None, evidence=None) -> "Router":
        """This router over another catalog (an external set's tools; an examples router over a catalog without
        examples: its :meth:`fallback`): ranker, gate, calibrator, thresholds, limits and evidence rules unchanged, the BM25 index fitted on that catalog's index texts (``lexical``: one already
        fitted so, which router_loco shares across its candidates, as it does ``evidence``, the evidence rules over
        that catalog) and each encoder's catalog embeddings made anew by the router's own encoders; a kNN gate keeps
        the router's exemplar index."""
        if self.examples is not None and not any(t.get("examples") for t in catalog):
            return self.fallback().on_catalog(catalog, langs, lexical, evidence)
        m = {**self.manifest, "langs": list(langs)}
        lexical = self.lexical_on(catalog, langs) if lexical is None else lexical
        docs = {n: enc.encode_documents([index_text(t, m["encoders"][n]["spec"]["variant"], tuple(langs))
                                         for t in catalog]) for n, enc in self.encoders.items()}
        examples = None
        if self.examples is not None:  # the model remade for the catalog's actions: its examples, else own texts
            texts, labels = training_texts(catalog, tuple(langs), generic_bank(tuple(langs)))
            chars = (m["examples"].get("chars") or {}).get("ngram")
            examples = fit_examples(self.encoders[self.ranker].encode_queries(texts), labels, m["examples"]["c"],
                                    texts, chars)
            m["examples"] = {**m["examples"], **examples_entry(examples)}
        return Router(m, catalog, lexical, EncoderSet(self.encoders, docs, self.exemplars), evidence, examples)

    def fallback(self) -> "Router":
        """An examples router's fallback for a catalog without examples: the single-pool ladder fitted on the same
        experiment (router.json's ``fallback``), over this router's own catalog."""
        fb, m = self.manifest["fallback"], dict(self.manifest)
        m["pipeline"] = {**m["pipeline"], "kind": "ladder", "ranker": m["lexical"]["name"], "fallback_of": "examples"}
        m |= {"calibrator": fb["calibrator"], "thresholds": fb["thresholds"], "encoders": {}}
        for key in ("examples", "fallback"):
            m.pop(key)
        return Router(m, self.catalog, self.lexical, evidence=self.evidence)

    def lexical_on(self, catalog: list[dict], langs) -> BM25Ranker:
        """The router's lexical ranker (spec and text settings) fitted on another catalog's index texts."""
        return fit_ranker(self.manifest["lexical"]["spec"], catalog, tuple(langs), self.text)

    def visible(self, candidates, n: int) -> np.ndarray:
        """(requests x catalog) which entries each of ``n`` requests sees: its own candidate tool ids (an empty list:
        none, so it is routed) and every route entry; RouterError names what is not a list of catalog ids."""
        if not isinstance(candidates, (list, tuple)) or len(candidates) != n:
            raise RouterError(f"candidates must be a list of {n} lists of tool ids, one per request; got "
                              + (f"{len(candidates)} lists" if isinstance(candidates, (list, tuple)) else
                                 type(candidates).__name__))
        col = {t: j for j, t in enumerate(self.ids)}
        out = np.tile(self.kinds != ACTION, (n, 1))
        for i, ids in enumerate(candidates):
            if not isinstance(ids, (list, tuple)):
                raise RouterError(f"request {i + 1}: candidates are {type(ids).__name__}, not a list of tool ids")
            unknown = [t for t in ids if not isinstance(t, str) or t not in col]
            if unknown:
                raise RouterError(f"request {i + 1}: candidate {unknown[0]!r} is not a tool id of the router's catalog")
            out[i, [col[t] for t in ids]] = True
        return out

    def check(self, text) -> str:
        """The text, or RouterError when it is not a request the router accepts (:func:`check_request`)."""
        return check_request(text, self.max_chars)

    def _checked_at(self, i: int, text) -> str:
        """:meth:`check` of a batch's request ``i``: a refusal names it (one refused request refuses the batch)."""
        try:
            return self.check(text)
        except RouterError as exc:
            raise RouterError(f"request {i + 1}: {exc}") from None

    def scores(self, texts, one: bool = False, visible: np.ndarray | None = None):
        """(lexical scores, ranker scores, raw gate signals, gate values) of checked ``texts``; ``one``: a single
        request scored alone; ``visible`` (:meth:`visible`): an entry a request does not see scores -inf, as in the
        gate study's per-request candidates. Raw signals: gate/signals.csv's columns as numpy columns
        (:class:`toolgate.core.inputs.Columns`; None for the ladder); gate values: the gate's log-odds or raw signal,
        the ladder's pool top score."""
        hide = (lambda m: m) if visible is None else (lambda m: np.where(visible, m, -np.inf))
        lex = hide(self.lexical.score(texts[0])[None] if one else np.asarray(self.lexical.score_many(list(texts))))
        queries = {}
        for name, enc in self.encoders.items():
            emb = enc.encode_queries(list(texts))
            queries[name] = (hide(emb @ self.docs[name].T), emb)
        rank = lex if self.ranker is None else queries[self.ranker][0]
        if self.examples is not None:
            rank = hide(action_matrix(self.examples, queries[self.ranker][1], self.catalog, list(texts)))
            return lex, rank, None, log_odds(rank[:, self.actions].max(1))
        if self.gate is None:
            return lex, rank, None, lex.max(1)
        signals = self.gate.signals(texts, lex[:, self.actions],
                                    {n: (c[:, self.actions], e) for n, (c, e) in queries.items()})
        return lex, rank, signals, self.gate.values(signals)

    def decisions(self, texts, scored, visible: np.ndarray | None = None) -> list[Decision]:
        """Decisions for checked ``texts`` from their :meth:`scores` (``visible``: the mask they were scored with);
        their latency is 0 (:meth:`decide` times a whole decision)."""
        lex, rank, _, value = scored
        prob = platt_probability(value, self.coef, self.intercept)
        acts = rank[:, self.actions]
        top = top_order(acts, self.top_k)
        route = route_choice(lex if self.examples is None else rank, self.ids)  # an examples model's route classes
        if self.kind == "ladder":
            kind, tool = ladder_decisions(lex, self.ids, self.kinds, self.t_low, self.t_high)
        else:
            kind, tool = band_decisions(prob, self.t_low, self.t_high, self.ids[self.actions][top[:, 0]], route)
        out = []
        seen = np.ones(acts.shape, bool) if visible is None else visible[:, self.actions]
        prob = np.where(seen.any(1), prob, 0.0)  # no action offered: none of them can be in catalog
        for i, t in enumerate(texts):
            band = (kind[i], str(tool[i]), route[i])
            k, chosen, why = self.rules.checked(t, band, acts[i], lex[i, self.actions].max(), seen[i])
            cands = [(str(self.ids[self.actions][j]), float(acts[i, j])) for j in top[i] if seen[i, j]]
            out.append(Decision(t, KIND_WORDS[k], (chosen or None) if k in ("action", "ask") else None,
                                float(prob[i]), cands, 0.0, why))
        return out

    def decide(self, text: str) -> Decision:
        """One request, scored alone; latency covers the checks, ranking, gating, the band and the evidence rules."""
        t0 = time.perf_counter()
        raw, text = text, self.check(text)
        out = _unmarked([raw], self.decisions([text], self.scores([text], one=True)))
        return _timed(out, time.perf_counter() - t0)[0]

    def decide_many(self, texts, candidates=None) -> list[Decision]:
        """Many requests in one batch (the way the pipeline scored them); latency is the per-request mean; an empty
        batch gives an empty list. ``candidates``: per request the tool ids it may choose from (default: the whole
        catalog); a request that sees no action takes the route step."""
        if isinstance(texts, (str, bytes)) or not isinstance(texts, (list, tuple)):
            raise RouterError(f"decide_many takes a list of texts, not {type(texts).__name__}; "
                              "decide(text) takes one")
        t0 = time.perf_counter()
        raws, texts = texts, [self._checked_at(i, t) for i, t in enumerate(texts)]
        visible = None if candidates is None else self.visible(candidates, len(texts))
        if not texts:
            return []
        # a request that sees no action is scored over the whole catalog (the gate's features need a score); it is
        # routed all the same (Router._checked)
        sees_action = None if visible is None else visible[:, self.actions].any(1)
        scored = self.scores(texts, visible=None if visible is None else np.where(sees_action[:, None], visible, True))
        return _timed(_unmarked(raws, self.decisions(texts, scored, visible)), time.perf_counter() - t0)


def _timed(decisions: list[Decision], seconds: float) -> list[Decision]:
    """The decisions with their latency: ``seconds`` over all of them, per request."""
    return [replace(d, latency_ms=1000.0 * seconds / len(decisions)) for d in decisions]


def _unmarked(raws, decisions: list[Decision]) -> list[Decision]:
    """A request that carried chat-template markup is a prompt someone wrapped, not a user's words: it may be asked
    about, never executed (the markup itself was removed before scoring, :func:`check_request`)."""
    return [replace(d, kind="ask", reason="template") if d.kind == "act" and _TEMPLATE.search(r) else d
            for r, d in zip(raws, decisions)]


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
