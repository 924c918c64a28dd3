"""``tool-rows``: one JSON object per line holding a request's own tools and its conversation, with the expected
call or a label (BFCL live and the many function-calling sets built the same way).

Each field is named by a flag (docs/formats.md, 'tool-rows'); any other field is kept in the row's ``meta``, and
presets name the fields of two shapes (:data:`PRESETS`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from ..core.errors import InputError, Problems
from ..external import adapters as A
from ..utterances import UNKNOWN_SLOT, is_in_catalog
from .policy import Decisions, Line, Tools, check_slots, json_field, json_lines, request, tool_object, with_extras

OUTCOMES = ("action", "ask", "delegate", "chat", "skip")
CALL_FIELDS = ("tool_calls", "answers")
CALL_KEYS = ("name", "arguments", "function", "parameters", "id", "type")  # an OpenAI call's keys, never a tool name


@dataclass(frozen=True)
class Fields:
    """Where a tool-rows file keeps each part of a request (``toolgate import tool-rows --help``)."""
    text: str = "messages"
    tools: str = "tools"
    call: str = ""                  # empty: CALL_FIELDS, then the assistant message after the request
    label: str = ""                 # empty: 'call' when the row has a call, else 'no_call'
    label_map: tuple = (("call", "action"),)
    slots: str = "missing_slots"
    id: str = "id"


# the names sets give each part, most common first: a missing field's suggested replacement
COMMON = {"text": ("messages", "conversation", "conversations", "dialog", "question", "query", "prompt", "user_query",
                   "instruction", "input", "text"),
          "tools": ("tools", "functions", "function", "available_tools", "input_tools", "apis", "tool_list"),
          "call": ("tool_calls", "answers", "ground_truth", "expected_call", "expected_calls", "function_call",
                   "answer", "call"),
          "label": ("label", "category", "correct_answer", "decision", "answer_type", "type"),
          "slots": ("missing_slots", "missing_params", "missing_parameters", "missing_arguments", "missing_args"),
          "id": ("id", "uid", "sample_id", "question_id", "qid", "idx")}

PRESETS = {
    "bfcl-live": Fields(text="question", tools="function", call="ground_truth",
                        label_map=(("call", "action"), ("no_call", "delegate"))),
    "labelled": Fields(label="label", label_map=(
        ("call", "action"), ("tool_call", "action"), ("needs_info", "ask"), ("request_for_info", "ask"),
        ("needs_more_info", "ask"), ("need_more_info", "ask"), ("needs_information", "ask"), ("clarify", "ask"),
        ("cannot_answer", "delegate"), ("no_tool", "delegate"), ("reject", "delegate"), ("direct", "chat"))),
}


def fields(preset: str = "", label_map: str = "", **given) -> Fields:
    """A preset's fields (or the defaults), with the fields ``given`` (None: not given) and ``label_map``
    (``label=outcome,...``: added to the preset's map, a label given again replaced)."""
    base = PRESETS[preset] if preset else Fields()
    mapping = dict(base.label_map)
    for item in filter(None, (part.strip() for part in label_map.split(","))):
        label, sep, outcome = (x.strip() for x in item.partition("="))
        if not sep or not label or outcome not in OUTCOMES:
            raise InputError("--label-map", f"'{item}' is not label=outcome (outcomes: {', '.join(OUTCOMES)})")
        mapping[label] = outcome
    return replace(base, label_map=tuple(mapping.items()), **{k: v for k, v in given.items() if v is not None})


def _call_names(path, lineno: int, field: str, value) -> list[str]:
    """The tool names of an expected call value, in order (empty: no call)."""
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        value = json_field(path, lineno, field, value)
    if value in (None, "", [], {}):
        return []
    names = []
    for call in value if isinstance(value, list) else [value]:
        fn = call.get("function", call) if isinstance(call, dict) else None
        if isinstance(call, str) and call.strip():
            names.append(call)
        elif isinstance(fn, dict) and isinstance(fn.get("name"), str):
            names.append(fn["name"])
        elif isinstance(call, dict) and len(call) == 1 and isinstance(next(iter(call.values())), dict) \
                and next(iter(call)) not in CALL_KEYS:
            names.append(next(iter(call)))  # BFCL's possible answer: {name: {argument: [values]}}
        else:
            raise InputError(path, "not a tool call (OpenAI tool_calls, {name, arguments}, {name: {arguments}} "
                                   "or a tool name)", lineno, field)
    return names


def _call(line: Line, fields: Fields, after: list) -> tuple[list[str], str]:
    """(the row's expected call names, the field they came from: the text field for the assistant message after
    the request, read when the call field is empty)."""
    path, lineno, obj = line.path, line.lineno, line.obj
    for field in (fields.call,) if fields.call else CALL_FIELDS:
        if obj.get(field) not in (None, "", []):
            return _call_names(path, lineno, field, obj[field]), field
    for m in after:
        if isinstance(m, dict) and m.get("role") == "assistant" and m.get("tool_calls"):
            return _call_names(path, lineno, fields.text, m["tool_calls"]), fields.text
    return [], fields.call or CALL_FIELDS[0]


def _slots(line: Line, fields: Fields, outcome: str, notes: Decisions) -> list[str]:
    path, lineno = line.path, line.lineno
    value = line.obj.get(fields.slots) or []
    slots = [value] if isinstance(value, str) else value
    if not isinstance(slots, list) or not all(isinstance(s, str) and s for s in slots):
        raise InputError(path, "missing slots must be a parameter name or a list of them", lineno, fields.slots)
    if slots and outcome != "ask":
        raise InputError(path, f"missing slots on a row whose gold outcome is '{outcome}', not 'ask'", lineno,
                         fields.slots)
    if outcome == "ask" and not slots:
        notes.count(f"ask without slot labels: missing_slots ['{UNKNOWN_SLOT}']")
        return [UNKNOWN_SLOT]
    return list(dict.fromkeys(slots))


def _tool_ids(line: Line, fields: Fields, tools: Tools) -> list[str]:
    """The catalog ids of a row's tools, in order."""
    path, lineno, obj = line.path, line.lineno, line.obj
    if fields.tools not in obj:
        raise InputError(path, "missing field", lineno, fields.tools)
    defs = obj[fields.tools]
    if isinstance(defs, str):  # the whole list as one JSON string
        defs = json_field(path, lineno, fields.tools, defs)
    if not isinstance(defs, list):
        raise InputError(path, "expected a list of tool definitions", lineno, fields.tools)
    ids = []
    for i, d in enumerate(defs):
        at = f"{fields.tools}[{i}]"
        ids.append(tools.add(tool_object(path, lineno, at, d), path, lineno, at))
    return list(dict.fromkeys(ids))


def _outcome(line: Line, fields: Fields, names: list, source: str, notes: Decisions):
    """(label, gold outcome) of a row: its label field's value, or 'call' / 'no_call', through the label map."""
    path, lineno, obj = line.path, line.lineno, line.obj
    labels = dict(fields.label_map)
    if fields.label and obj.get(fields.label) in (None, ""):
        raise InputError(path, "missing label", lineno, fields.label)
    label = str(obj[fields.label]) if fields.label else "call" if names else "no_call"
    if label not in labels:
        raise InputError(path, f"label '{label}' has no gold outcome (--label-map {label}=action|ask|delegate|"
                               f"chat|skip; mapped: {', '.join(labels)})", lineno, fields.label or source)
    notes.count(f"label '{label}' -> {labels[label]}")
    return label, labels[label]


def _row(line: Line, fields: Fields, tools: Tools, notes: Decisions, prefix: str):
    """(utterance without its gold tool, candidate ids, gold call name or None) of one row; None when skipped.
    ``prefix``: of the default utterance id ``r<line>`` (the file's name when there are several files)."""
    path, lineno, obj = line.path, line.lineno, line.obj
    ids = _tool_ids(line, fields, tools)
    text, context, after = request(path, lineno, fields.text, obj.get(fields.text))
    names, source = _call(line, fields, after)
    label, outcome = _outcome(line, fields, names, source, notes)
    if outcome == "skip":
        return None
    # after the skip label: a skipped row is no row of any language
    lang = notes.lang(path, lineno, text, fields.text, obj.get("lang"))
    if lang is None:
        return None
    uid = str(obj.get(fields.id) or f"{prefix}r{lineno:05d}")
    if not ids:
        given, outcome = outcome, notes.offered_none(path, lineno, fields.tools, uid, outcome)
        names = names if outcome == given else []
    if is_in_catalog(outcome) != bool(names):
        raise InputError(path, f"label '{label}' means '{outcome}' but the row has " + (
            f"a call of '{names[0]}'" if names else "no call naming its tool (--call-field names the field)"),
            lineno, source)
    if names:
        notes.count("gold call from " + ("the assistant message after the request" if source == fields.text
                                         else f"'{source}'"))
        notes.count("gold tool = the first of several calls", len(names) > 1)
    calls = (fields.call,) if fields.call else CALL_FIELDS
    known = {fields.id, fields.text, fields.tools, fields.label, fields.slots, "lang", *calls}
    utt = with_extras({"utterance_id": uid, "pair_id": uid, "lang": lang,
                       "text": text, "gold_outcome": outcome, "gold_tool": None, "slice": "out", "subtype": label,
                       "missing_slots": _slots(line, fields, outcome, notes)}, context,
                      notes.meta(obj, known))
    return utt, ids, names[0] if names else None


def _suggest(what: str, found: Counter, taken: set) -> str:
    """The first common name of a part that the file has and no other flag takes ('' when none)."""
    return next((n for n in COMMON[what] if n in found and n not in taken), "")


def survey(path, rows: list, fields: Fields) -> None:
    """Every field problem of a tool-rows file in one error, before any row is read: each mapped field missing
    (with its count and first line), a call or slot field only under another name, each label without a gold
    outcome, with the flags that fit (a common name the file has) and the fields the file has."""
    found = Counter(k for _, r in rows for k in r)
    taken = {v for k, v in vars(fields).items() if k != "label_map" and v}
    problems, flags, spread = [], [], 0  # spread: problems over more than one row, or of the whole file

    def problem(what: str, text: str, n: int = 0) -> None:
        nonlocal spread
        alt = _suggest(what, found, taken)
        problems.append(text + (f": --{what}-field {alt}?" if alt else ""))
        flags.extend([f"--{what}-field", alt] if alt else [])
        spread += n != 1

    for what in ("text", "tools", "label"):
        name = getattr(fields, what)
        missing = [ln for ln, r in rows if name and r.get(name) in (None, "")]
        if missing:
            problem(what, f"--{what}-field '{name}' missing in {len(missing)} of {len(rows)} rows (first: line "
                          f"{missing[0]})", len(missing))
    calls = (fields.call,) if fields.call else CALL_FIELDS
    for what, absent in (("call", not any(c in found for c in calls)), ("slots", fields.slots not in found),
                         ("id", fields.id not in found)):
        if absent and _suggest(what, found, taken):  # kept in meta unread otherwise
            problem(what, f"no {what} field ({', '.join(calls) if what == 'call' else getattr(fields, what)})")
    labels, first = Counter(), {}
    label = fields.label if fields.label in found else fields.label and _suggest("label", found, taken)
    for ln, r in rows:  # the labels of the label field, or of the one suggested for it
        if label and r.get(label) not in (None, ""):
            labels[str(r[label])] += 1
            first.setdefault(str(r[label]), ln)
    unmapped = [x for x in labels if x not in dict(fields.label_map)]
    for x in unmapped:
        problems.append(f"label '{x}' ({labels[x]} rows, first: line {first[x]}) has no gold outcome")
        spread += labels[x] != 1
    if unmapped:
        flags += ["--label-map", ",".join(f"{x}=action|ask|delegate|chat|skip" for x in unmapped)]
    if len(problems) > 1 or spread:  # one problem on one row: the row's own error names its line and field
        raise InputError(path, f"{len(problems)} problems: " + "; ".join(problems) + " (fields: " + ", ".join(
            f"{k} ({n} rows)" for k, n in found.items()) + ")" + (f"; try {' '.join(flags)}" if flags else ""))


def _parsed(line: Line, fields: Fields, tools: Tools, notes: Decisions, files: tuple) -> list[tuple]:
    """[(path, line, utterance, candidate ids, gold call name)] of one row ([] when skipped); ``files``: (several
    files were given, utterance id -> where it was first read, updated)."""
    several, seen = files
    row = _row(line, fields, tools, notes, f"{Path(line.path).stem}-" if several else "")
    if row is None:
        return []
    uid = row[0]["utterance_id"]
    if uid in seen:
        raise InputError(line.path, f"duplicate id '{uid}' (first: {seen[uid]})", line.lineno, fields.id)
    seen[uid] = f"{line.path}:{line.lineno}"
    return [(line.path, line.lineno, *row)]


def _gold(line: Line, fields: Fields, ids: list[str], gold: str, tools: Tools) -> str:
    """The catalog id of a row's gold call among its tools (none given: among every tool of the input);
    ``line.obj``: the row's utterance, whose missing slots are checked against that tool."""
    pool = ids or list(tools.names)
    found = [t for t in pool if tools.names[t] == gold]
    where = "the row's tools" if ids else "every tool of the input"
    if len(found) != 1:
        raise InputError(line.path, f"gold call '{gold}' names {len(found)} different definitions among {where}"
                         if found else f"gold call '{gold}' is not among {where}", line.lineno, fields.tools)
    check_slots(line.path, line.lineno, fields.slots, line.obj["missing_slots"], tools.rows, found[0])
    return found[0]


def tool_rows(paths, fields: Fields, notes: Decisions) -> A.ExternalSet:
    """Tool-rows files as one set: each row's tools are its candidates; gold tools resolved among them (a row
    offered no tools, with ``--empty-candidates catalog``: among every tool of the files, by name)."""
    tools, parsed, seen, problems = Tools(notes, "tool-rows"), [], {}, Problems()
    for path in paths:
        rows = json_lines(path, "rows", problems)
        with problems.each():  # the file's field problems in one error, else each row's own
            survey(path, rows, fields)
            for lineno, obj in rows:
                with problems.each():
                    parsed += _parsed(Line(path, lineno, obj), fields, tools, notes, (len(paths) > 1, seen))
    out = A.Rows()
    for path, lineno, utt, ids, gold in parsed:
        with problems.each():
            if gold is not None:
                utt.update(gold_tool=_gold(Line(path, lineno, utt), fields, ids, gold, tools), slice="in")
            out.add(utt, ids, utt["utterance_id"], utt["subtype"])
    problems.done()
    return out.done("tool-rows", notes.forced or "en", tools)
