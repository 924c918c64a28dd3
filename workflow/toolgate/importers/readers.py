"""Readers of the importable formats (docs/formats.md, 'Import formats'); each returns an
:class:`~toolgate.external.adapters.ExternalSet`.

A row without its own list has an empty ``candidates`` entry (it sees the whole catalog). Where a source leaves
a question open (language, unknown fields, an empty list), :mod:`.policy` decides and counts.
"""
from __future__ import annotations

from pathlib import Path

from ..core import io
from ..core.catalog import function_name
from ..core.errors import InputError, Problems
from ..core.schemas.plain import DOC_CHARS, NAME_CHARS
from ..data.sources import PINS
from ..external import adapters as A
from ..external.sources import sha256
from ..utterances import is_in_catalog
from .build import Options
from .pairs import Columns, pairs
from .policy import Decisions, Line, Tools, check_slots, json_lines, request, with_extras
from .toolrows import Fields, tool_rows

FORMATS = ("openai-tools", "tool-rows", "pairs", "bfcl", "functionchat", "clinc150", "beir")
REQUEST_FIELDS = {"id", "text", "messages", "tool", "candidates", "missing_slots", "outcome", "pair_id", "subtype",
                  "lang"}
FIXED_LANGS = {"bfcl": "en", "functionchat": "ko", "clinc150": "en"}
FUNCTIONCHAT_FILES = {"FunctionChat-Singlecall.jsonl": A.functionchat_singlecall,
                      "FunctionChat-CallDecision.jsonl": A.functionchat_calldecision}


def read(fmt: str, sources: list, lang: str | None = None, options: Options | None = None) -> tuple[A.ExternalSet, dict]:
    """The set in ``sources`` (files or a folder, by format) and what reading it decided (:class:`Decisions`).

    ``lang`` forces the language of formats without a fixed one (BFCL is English, FunctionChat-Bench Korean;
    None: each row's own, from its script); ``options``' reading options: ``subsets``, ``empty_candidates`` (what
    an empty candidate list means), ``other_langs`` (a row in another script), ``fields`` (where tool-rows,
    :class:`Fields`, or pairs, :class:`Columns`, keeps each part of a request)."""
    if lang and fmt in FIXED_LANGS and lang != FIXED_LANGS[fmt]:
        raise InputError("--lang", f"{fmt} is in '{FIXED_LANGS[fmt]}', not '{lang}'")
    opt = options or Options()
    sources, notes = [Path(s) for s in sources], Decisions(lang, opt.empty_candidates, opt.other_langs)
    fields = opt.fields
    for s in sources:
        if not s.exists():
            raise InputError(s, "no such file or folder")
    if fmt == "openai-tools":
        if len(sources) != 2:
            raise InputError(" ".join(map(str, sources)), "openai-tools takes two files: TOOLS.json REQUESTS.jsonl")
        ext = openai_tools(sources[0], sources[1], notes)
    elif fmt == "tool-rows":
        ext = tool_rows(sources, fields or Fields(), notes)
    elif fmt == "pairs":
        if len(sources) != 2:
            raise InputError(" ".join(map(str, sources)), "pairs takes two files: TOOLS.json PAIRS.csv|PAIRS.jsonl")
        tools = Tools(notes, "pairs")
        ext = pairs(sources[1], _tool_names(sources[0], tools), tools, notes, fields or Columns())
    elif fmt == "beir":
        ext = beir(*_beir_paths(sources), notes)
    elif fmt == "bfcl":
        ext = A.bfcl(*_bfcl_files(sources, opt.subsets))
    elif fmt == "functionchat":
        ext = functionchat(sources)
    elif fmt == "clinc150":
        ext = clinc150(sources, notes)
    else:
        raise InputError(fmt, f"unknown format (known: {', '.join(FORMATS)})")
    return ext, notes


# ----------------------------------------------------------------------------------------------- openai-tools

TOOLS_SHAPE = ("a JSON list of tool objects (OpenAI schemas or bare {name, description, parameters}), "
               "{\"tools\": [...]}, a name -> description (or -> definition) map, or JSON Lines of tool objects")


def load_json(path):
    """A JSON file, or InputError naming the line and column of a syntax error."""
    return io.loads_json(io.read_text(path), path)


def tool_objects(path, notes: Decisions) -> list:
    """The tool definitions of a tools file (:data:`TOOLS_SHAPE`); a shape error names the shapes read."""
    try:
        objs = load_json(path)
    except InputError:  # JSON Lines, or a syntax error
        if not _object_line(io.read_text(path).lstrip().split("\n", 1)[0]):
            raise  # not JSON Lines: the syntax error as it is
        try:
            objs = [obj for _, obj in io.read_jsonl(path)]
        except InputError as bad:
            raise InputError(bad.path, f"expected {TOOLS_SHAPE}; as JSON Lines: {bad.message}", bad.line,
                             bad.field) from None
        notes.count("tools file read as JSON Lines")
    if isinstance(objs, dict) and ("function" in objs or "name" in objs):  # one tool object, not a list of them
        objs = [objs]
    if isinstance(objs, dict) and not isinstance(objs.get("tools"), list):  # a map name -> description/definition
        objs = [{"name": k, **v} if isinstance(v, dict) else {"name": k, "description": v} for k, v in objs.items()]
        notes.count("tools file read as a name -> description map")
    objs = objs.get("tools") if isinstance(objs, dict) else objs
    if not isinstance(objs, list) or not objs:
        raise InputError(path, f"expected {TOOLS_SHAPE}, got " + ("an empty list" if objs == [] else
                                                                   f"a JSON {type(objs).__name__}"))
    return objs


def _object_line(line: str) -> bool:
    """Is one line a whole JSON object (the first line of JSON Lines)?"""
    try:
        return isinstance(io.loads_json(line, "<line>"), dict)
    except InputError:
        return False


def _tool_names(path, tools: Tools) -> dict[str, str]:
    """Tool name -> catalog id for every tool of a tools file."""
    objs = tool_objects(path, tools.notes)
    ids, problems = {}, Problems()
    for i, obj in enumerate(objs):
        with problems.each():
            name = function_name(obj.get("function", obj) if isinstance(obj, dict) else None)
            if name is None:
                raise InputError(path, "tool has no function name", field=f"[{i}].name")
            if name in ids:
                raise InputError(path, f"duplicate tool name '{name}'", field=f"[{i}].name")
            ids[name] = tools.add(obj, path, None, f"[{i}]")
    problems.done()
    return ids


def _names(path, lineno: int, field: str, value, ids: dict) -> list[str]:
    """Tool names (one, or a list) as catalog ids; unknown names are errors."""
    names = value if isinstance(value, list) else [value]
    for n in names:
        if not isinstance(n, str):  # an object or a number is no name (a dict is not even hashable)
            raise InputError(path, f"a tool name is a string, not {type(n).__name__}", lineno, field)
        if n not in ids:
            raise InputError(path, f"unknown tool '{n}' (not in the tools file)", lineno, field)
    return [ids[n] for n in names]


def _check_request(path, lineno: int, obj: dict, gold, cands: list[str], tools: A.Tools) -> None:
    """A request's gold, candidates, missing slots and outcome agree with each other and with its tool."""
    if gold and cands and gold not in cands:
        raise InputError(path, f"tool '{obj['tool']}' is not among the request's candidates", lineno, "candidates")
    missing = obj.get("missing_slots") or []
    if not isinstance(missing, list) or not all(isinstance(m, str) for m in missing):
        raise InputError(path, "missing_slots must be a list of parameter names", lineno, "missing_slots")
    if missing and not gold:
        raise InputError(path, "missing_slots needs a tool (the request asks about that tool's parameters)", lineno,
                         "missing_slots")
    if missing:
        check_slots(path, lineno, "missing_slots", missing, tools.rows, gold)
    if "outcome" in obj and (gold or obj["outcome"] not in ("delegate", "chat")):
        raise InputError(path, "outcome is given only for a request without a tool, as delegate or chat", lineno,
                         "outcome")


def _openai_request(line: Line, ids: dict, tools: Tools, notes: Decisions, out: A.Rows, seen: dict) -> None:
    """One request of an openai-tools requests file, added to ``out`` (nothing when its language is skipped);
    ``seen``: each request id's line, updated."""
    path, lineno, obj = line.path, line.lineno, line.obj
    uid = str(obj.get("id") or f"r{lineno:05d}")
    if uid in seen:
        raise InputError(path, f"duplicate id '{uid}' (first on line {seen[uid]})" if obj.get("id") else
                         f"the line's default id '{uid}' is line {seen[uid]}'s id: give this request an id", lineno,
                         "id" if obj.get("id") else None)
    seen[uid] = lineno
    field = "messages" if "text" not in obj and "messages" in obj else "text"
    text, context, _ = request(path, lineno, field, obj.get(field))
    lang = notes.lang(path, lineno, text, field, obj.get("lang"))
    if lang is None:
        return
    meta = notes.meta(obj, REQUEST_FIELDS)
    gold = _names(path, lineno, "tool", obj["tool"], ids)[0] if obj.get("tool") is not None else None
    cands = _names(path, lineno, "candidates", obj["candidates"], ids) if obj.get("candidates") else []
    missing = obj.get("missing_slots") or []
    _check_request(path, lineno, obj, gold, cands, tools)
    outcome = ("ask" if missing else "action") if gold else obj.get("outcome", "delegate")
    if obj.get("candidates") == []:
        outcome = notes.offered_none(path, lineno, "candidates", uid, outcome)
        gold, missing = (gold, missing) if is_in_catalog(outcome) else (None, [])
    utt = {"utterance_id": uid, "pair_id": str(obj.get("pair_id") or uid),
           "lang": lang, "text": text, "gold_outcome": outcome,
           "gold_tool": gold, "slice": "in" if gold else "out", "subtype": str(obj.get("subtype") or outcome),
           "missing_slots": list(missing)}
    out.add(with_extras(utt, context, meta), cands, utt["pair_id"], utt["subtype"])


def openai_tools(tools_path, requests_path, notes: Decisions) -> A.ExternalSet:
    """OpenAI tool schemas and a JSONL of requests with gold tool names (``tool``: null = cannot be answered)."""
    tools, out = Tools(notes, "imported"), A.Rows()
    ids = _tool_names(tools_path, tools)
    path, problems, seen = requests_path, Problems(), {}
    for lineno, obj in json_lines(path, "requests", problems):
        with problems.each():
            _openai_request(Line(path, lineno, obj), ids, tools, notes, out, seen)
    problems.done()
    return out.done("openai-tools", notes.forced or "en", tools)


# ----------------------------------------------------------------------------------------------- beir

def _beir_paths(sources: list[Path]) -> tuple[Path, Path, Path]:
    """(corpus, queries, qrels): a folder holding corpus.jsonl, queries.jsonl and qrels.tsv (or qrels/test.tsv),
    or the three files in that order."""
    if len(sources) == 1 and sources[0].is_dir():
        d = sources[0]
        qrels = d / "qrels.tsv" if (d / "qrels.tsv").is_file() else d / "qrels" / "test.tsv"
        return d / "corpus.jsonl", d / "queries.jsonl", qrels
    if len(sources) != 3:
        raise InputError(" ".join(map(str, sources)), "beir takes a folder, or three files: corpus.jsonl "
                                                      "queries.jsonl qrels.tsv")
    return sources[0], sources[1], sources[2]


def _qrels(path, docs: dict) -> dict[str, list[tuple[int, str]]]:
    """Query id -> [(score, corpus id)] with score > 0, in file order; a header line is skipped."""
    lines = io.read_text(path).splitlines()
    out: dict[str, list] = {}
    problems = Problems()
    for lineno, line in enumerate(lines, start=1):
        cells = line.rstrip("\n").split("\t")
        if not line.strip() or (lineno == 1 and not cells[-1].strip().lstrip("-").isdigit()):
            continue
        with problems.each():
            if len(cells) != 3:
                raise InputError(path, f"expected 3 tab-separated columns, got {len(cells)}", lineno)
            qid, did, score = (c.strip() for c in cells)
            if not score.lstrip("-").isdigit():
                raise InputError(path, f"score '{score}' is not an integer", lineno, "score")
            if did not in docs:
                raise InputError(path, f"unknown corpus-id '{did}' (not in the corpus)", lineno, "corpus-id")
            if int(score) > 0:
                out.setdefault(qid, []).append((int(score), did))
    problems.done()
    return out


def _beir_text(value):
    """A corpus entry's title or text: a map language -> text as it is, anything else as a stripped string."""
    return value if isinstance(value, dict) else str(value or "").strip()


def _within(value, limit: int, notes: Decisions):
    """A title (``limit``: the catalog's for a name) or a text (for a description), each text of it cut to
    ``limit`` characters where longer, counted: passages run longer than any tool's description."""
    if isinstance(value, dict):
        return {k: _within(v, limit, notes) for k, v in value.items()}
    if not isinstance(value, str) or len(value) <= limit:
        return value
    notes.count(f"corpus {'titles' if limit == NAME_CHARS else 'texts'} cut to the catalog's limit of {limit} characters")
    return value[:limit].rstrip()


def _beir_query(line: Line, judged: dict, docs: dict, notes: Decisions, out: A.Rows) -> None:
    """One judged query as a request of its highest-scored relevant entry (nothing for an unjudged one)."""
    queries, lineno, rec = line.path, line.lineno, line.obj
    qid, text = str(rec.get("_id", "")), rec.get("text")
    if qid not in judged:
        return
    if not isinstance(text, str) or not text.strip():
        raise InputError(queries, "query text must be a non-empty string", lineno, "text")
    gold, uid = docs[max(judged[qid], key=lambda x: x[0])[1]], f"q-{qid}"
    lang = notes.lang(queries, lineno, text, "text", rec.get("lang"))
    if lang is None:
        return
    utt = A.utterance(uid, uid, lang, text, gold, "query")
    out.add(with_extras(utt, [], notes.meta(rec, ("_id", "text", "lang"))), [], uid, "query", (queries, lineno, "_id"))


def beir(corpus, queries, qrels, notes: Decisions) -> A.ExternalSet:
    """A BEIR-style retrieval set as a tool set: corpus entries are tools, judged queries are requests.

    The gold tool of a query is its highest-scored relevant entry (the first on ties); a query with several
    relevant entries still has one gold tool. Queries without a relevant entry are left out.
    """
    tools, out, docs, problems = Tools(notes, "beir"), A.Rows(), {}, Problems()
    for lineno, rec in json_lines(corpus, "corpus entries", problems):
        with problems.each():
            did, title, text = rec.get("_id"), _beir_text(rec.get("title")), _beir_text(rec.get("text"))
            if not isinstance(did, (str, int)) or str(did) == "":
                raise InputError(corpus, "missing field", lineno, "_id")
            if not (title or text):
                raise InputError(corpus, "entry has neither title nor text", lineno, "text")
            per_lang = {f"{to}_{c}": rec[f"{key}_{c}"] for key, to in (("title", "name"), ("text", "description"))
                        for c in io.LANGS if f"{key}_{c}" in rec}
            tool = {"name": title or str(did), "description": text or title, **per_lang}
            docs[str(did)] = tools.add({k: _within(v, NAME_CHARS if k.startswith("name") else DOC_CHARS, notes)
                                        for k, v in tool.items()}, corpus, lineno)
    problems.done()
    judged = _qrels(qrels, docs)
    for lineno, rec in json_lines(queries, "queries", problems):
        with problems.each():
            _beir_query(Line(queries, lineno, rec), judged, docs, notes, out)
    problems.done()
    return out.done("beir", notes.forced or "en", tools)


# ----------------------------------------------------------------------------------------------- bfcl, functionchat

def _bfcl_files(sources: list[Path], subsets=()) -> tuple[Path, tuple[str, ...]]:
    """(folder, subsets) of BFCL question files given as a folder or as ``BFCL_v4_<subset>.json`` files."""
    if len(sources) == 1 and sources[0].is_dir():
        folder = sources[0]
        found = tuple(s for s in A.BFCL_SUBSETS if (folder / f"BFCL_v4_{s}.json").is_file())
    else:
        folder, found = sources[0].parent, []
        for p in sources:
            sub = p.name.removeprefix("BFCL_v4_").removesuffix(".json")
            if p.parent != folder or sub not in A.BFCL_SUBSETS or p.name != f"BFCL_v4_{sub}.json":
                raise InputError(p, "not a BFCL question file of one folder (BFCL_v4_<subset>.json; subsets: "
                                    f"{', '.join(A.BFCL_SUBSETS)})")
            found.append(sub)
        found = tuple(found)
    chosen = tuple(s for s in found if not subsets or s in subsets)
    if not chosen:
        raise InputError(folder, f"no BFCL question file of subsets {', '.join(subsets or A.BFCL_SUBSETS)}")
    return folder, chosen


def clinc150(sources: list[Path], notes: Decisions) -> A.ExternalSet:
    """CLINC150 from a folder holding data_full.json, or one file of its shape (data_small.json, data_plus.json ...);
    whether the file is the pinned data_full.json is counted, and so are the out-of-scope training requests left
    unread."""
    if len(sources) != 1:
        raise InputError(" ".join(map(str, sources)), "clinc150 takes one folder or one data_*.json file")
    path = sources[0] / "data_full.json" if sources[0].is_dir() else sources[0]
    if not path.is_file():
        raise InputError(path, "no such file (a CLINC150 folder holds data_full.json)")
    pin = PINS["clinc150"]
    pinned = sha256(path) == pin["files"]["data_full.json"]
    notes.count(f"source file: {'the' if pinned else 'not the'} pinned data_full.json ({pin['repo']}@"
                f"{pin['commit'][:12]}, sha256)")
    data = A.clinc150_splits(path)
    notes.count("out-of-scope training requests not read (oos-threshold protocol)", len(data["oos_train"]))
    return A.clinc150_set(data)


def functionchat(sources: list[Path]) -> A.ExternalSet:
    """FunctionChat-Bench Singlecall and/or CallDecision (a folder: every one present), with one tool registry."""
    if len(sources) == 1 and sources[0].is_dir():
        files = [sources[0] / n for n in FUNCTIONCHAT_FILES if (sources[0] / n).is_file()]
    else:
        files = sources
    bad = [p for p in files if p.name not in FUNCTIONCHAT_FILES]
    if bad or not files:
        raise InputError(bad[0] if bad else sources[0], f"not a FunctionChat-Bench file ({', '.join(FUNCTIONCHAT_FILES)})")
    tools = A.Tools("ko", "functionchat")
    parts = [FUNCTIONCHAT_FILES[p.name](p.parent, tools) for p in files]
    merged = A.Rows()
    for part in parts:
        for row in zip(part.utterances, part.candidates, part.clusters, part.conditions):
            merged.add(*row)
    return merged.done("functionchat", "ko", tools)
