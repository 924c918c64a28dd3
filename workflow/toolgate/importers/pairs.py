"""``pairs``: (request, tool) rows in CSV or JSONL beside a file of tool descriptions, the shape most tool
retrieval sets ship (ToolBench-style query -> API pairs, MetaTool's query -> tool rows).

Rows of one request are one request (the first row's tool is gold; repeats and second tools are counted); one
pooled catalog. Columns and options: docs/formats.md, 'pairs'.
"""
from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

from ..core import io
from ..core.errors import InputError, Problems
from ..external import adapters as A
from ..utterances import UNKNOWN_SLOT
from .build import MAX_CHARS
from .policy import Decisions, Line, Tools, json_lines, with_extras

COMMON = {"text": ("text", "query", "question", "request", "utterance", "instruction", "input"),
          "tool": ("tool", "tool_name", "api", "api_name", "function", "function_name", "name", "label"),
          "id": ("id", "query_id", "qid", "_id"),
          "outcome": ("outcome",),
          "lang": ("lang", "language")}
OPTIONAL = ("id", "outcome", "lang")  # columns a file may lack
# an outcome cell -> (gold outcome, needs a tool): act and ask name the tool, delegate and chat leave the cell empty
OUTCOMES = {"act": ("action", True), "action": ("action", True), "ask": ("ask", True),
            "delegate": ("delegate", False), "chat": ("chat", False)}


@dataclass(frozen=True)
class Columns:
    """Where a pairs file keeps each part of a row (empty: the first of :data:`COMMON` the file has)."""
    text: str = ""
    tool: str = ""
    id: str = ""
    outcome: str = ""
    lang: str = ""


def records(path: Path) -> list[tuple[int, dict]]:
    """(line, row) of a CSV / TSV file with a header row (by its extension) or of a JSONL file."""
    if path.suffix.lower() not in (".csv", ".tsv"):
        return json_lines(path, "(request, tool) pairs")
    # a BOM (Excel's "CSV UTF-8") is not part of the first column's name
    reader = csv.DictReader(StringIO(io.read_text(path).removeprefix("\ufeff"), newline=""),
                            delimiter="\t" if path.suffix.lower() == ".tsv" else ",", strict=True)
    rows = []
    try:
        for row in reader:
            if None in row:  # more cells than the header: an unquoted delimiter in a request would cut its text
                raise InputError(path, f"{len(row[None])} more cells than the header's {len(reader.fieldnames)}: "
                                       "quote a cell that holds the delimiter", reader.line_num)
            if None in row.values():  # fewer cells: a quote left open joins the lines after it into one cell
                short = sum(v is not None for v in row.values())
                raise InputError(path, f"{short} cells, fewer than the header's {len(reader.fieldnames)} (an empty "
                                       "cell is an empty value between delimiters; a quote left open swallows the "
                                       "lines after it)", reader.line_num)
            rows.append((reader.line_num, row))
    except csv.Error as exc:  # a quote left open or text after a closing one, a cell over the size limit, a NUL
        raise InputError(path, f"unreadable CSV ({exc}; a request holds at most {MAX_CHARS} characters)",
                         reader.line_num + 1) from None
    if not rows:
        raise InputError(path, "file has no rows (a header row, then one row per pair)")
    return rows


def columns_of(path, given: Columns, found: Counter, notes: Decisions) -> Columns:
    """The columns to read: the given ones, else the first common name present (counted), either matched to the
    file's header without regard to case; every missing one in one error, with the columns the file has."""
    header = {}
    for name in found:
        header.setdefault(name.lower(), name)
    chosen, missing = {}, []
    for what, names in COMMON.items():
        want = getattr(given, what)
        name = (want if want in found else header.get(want.lower(), "")) if want else \
            next((header[n] for n in names if n in header), "")
        if want and not name or not want and not name and what not in OPTIONAL:
            missing.append(f"no {what} column " + (f"'{want}'" if want else f"(looked for {', '.join(names)})")
                           + f": --{what}-column NAME names it")
        elif name and not want:
            notes.count(f"{what} column: '{name}' (--{what}-column names another)")
        chosen[what] = name
    if missing:
        raise InputError(path, "; ".join(missing) + " (columns: " + ", ".join(f"{k} ({n} rows)" for k, n in
                                                                        found.items()) + ")")
    return Columns(**chosen)


def pairs(pairs_path, ids: dict[str, str], tools: Tools, notes: Decisions, given: Columns) -> A.ExternalSet:
    """A pairs file over its tools (``ids``: tool name -> catalog id of ``tools``) as one set (no candidate lists:
    every request sees the whole catalog); every bad row in one error."""
    rows = records(Path(pairs_path))
    col = columns_of(pairs_path, given, Counter(k for _, r in rows for k in r), notes)
    unknown, unknown_at, first, out, problems = Counter(), None, {}, A.Rows(), Problems()
    for lineno, rec in rows:
        name = str(rec.get(col.tool) or "").strip()
        if name and name not in ids:
            unknown[name] += 1
            unknown_at = unknown_at or (lineno, name)
            continue
        with problems.each():
            utt = _pair(Line(pairs_path, lineno, rec), col, ids.get(name), notes, first)
            if utt is not None:
                out.add(with_extras(utt, [], notes.meta(rec, {*vars(col).values()} - {""})), [], utt["utterance_id"],
                        utt["subtype"])
    if unknown:
        problems.found.append(InputError(pairs_path, f"{sum(unknown.values())} rows name {len(unknown)} tools the "
                                                     f"tools file does not have (first: '{unknown_at[1]}')",
                                         unknown_at[0], col.tool))
    problems.done()
    return out.done("pairs", notes.forced or "en", tools)


def _pair(line: Line, col: Columns, tool: str | None, notes: Decisions, first: dict) -> dict | None:
    """The utterance of one row (``tool``: its tool's catalog id, None for an empty cell); None when it repeats an
    earlier row's request (``first``: request key -> its utterance, updated) or its language is skipped."""
    path, lineno, rec = line.path, line.lineno, line.obj
    text = rec.get(col.text)
    if not isinstance(text, str) or not text.strip():
        raise InputError(path, "no request text (a non-empty string)", lineno, col.text)
    cell = str(rec.get(col.outcome) or "").strip().lower() if col.outcome else ""
    outcome, named = OUTCOMES.get(cell, (None, None)) if cell else ("action" if tool else "delegate", tool is not None)
    if outcome is None or named != (tool is not None):
        raise InputError(path, f"outcome '{cell}' " + ("is not one of " + ", ".join(OUTCOMES) if outcome is None else
                               "needs a tool" if named else "is given only with an empty tool cell"), lineno,
                         col.outcome)
    key = (str(rec.get(col.id) or "").strip() if col.id else "") or text.strip()
    if key in first:
        same = first[key]["gold_tool"] == tool
        notes.count("repeated (request, tool) pairs: read once" if same
                    else "requests with another tool on a later row: the first row's tool is the gold one")
        return None
    uid = str(rec.get(col.id) or f"p{lineno:05d}")
    lang = notes.lang(path, lineno, text, col.text, rec.get(col.lang) if col.lang else None)
    if lang is None:
        return None
    utt = A.utterance(uid, uid, lang, text, tool, (cell or "pair") if tool else (cell or "no_tool"))
    if outcome == "ask":
        notes.count(f"ask without slot labels: missing_slots ['{UNKNOWN_SLOT}']")
    utt.update(gold_outcome=outcome, missing_slots=[UNKNOWN_SLOT] if outcome == "ask" else [])
    first[key] = utt
    return utt
