"""``pairs``: (request, tool) rows in CSV or JSONL beside a file of tool descriptions, the shape most tool
retrieval sets ship (ToolBench-style query -> API pairs, MetaTool's query -> tool rows).

* ``TOOLS``: any shape :func:`~.readers.tool_objects` reads (a JSON list of tool objects or OpenAI schemas,
  ``{"tools": [...]}``, a name -> description map, JSON Lines);
* ``PAIRS``: ``.csv`` / ``.tsv`` with a header row, or JSONL; one row per (request, tool) pair, an empty tool
  cell: a request no tool answers (gold delegate). Columns (``--text-column``, ``--tool-column``,
  ``--id-column``; default: the first of :data:`COMMON` the file has, the choice counted);
* rows of one request (the same id, else the same text) are one request: a repeated pair is counted, a second
  tool counted too (the first row's tool is the gold one); every other column is kept in ``meta``.

One pooled catalog (every tool of the tools file): ``--holdout-tools`` makes out-of-catalog requests,
``--per-tool K`` and ``--sample N`` balance and cut the draw (:mod:`.build`).
"""
from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

from .. import io
from ..errors import InputError
from ..external import adapters as A
from .policy import Decisions, Tools, json_lines, with_extras

COMMON = {"text": ("text", "query", "question", "request", "utterance", "instruction", "input"),
          "tool": ("tool", "tool_name", "api", "api_name", "function", "function_name", "name", "label"),
          "id": ("id", "query_id", "qid", "_id")}


@dataclass(frozen=True)
class Columns:
    """Where a pairs file keeps each part of a row (empty: the first of :data:`COMMON` the file has)."""
    text: str = ""
    tool: str = ""
    id: str = ""


def records(path: Path) -> list[tuple[int, dict]]:
    """(line, row) of a CSV / TSV file with a header row (by its extension) or of a JSONL file."""
    if path.suffix.lower() not in (".csv", ".tsv"):
        return json_lines(path, "(request, tool) pairs")
    # a BOM (Excel's "CSV UTF-8") is not part of the first column's name
    reader = csv.DictReader(StringIO(io.read_text(path).removeprefix("\ufeff"), newline=""),
                            delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
    rows = []
    for row in reader:
        if None in row:  # more cells than the header: an unquoted delimiter in a request would cut its text
            raise InputError(path, f"{len(row[None])} more cells than the header's {len(reader.fieldnames)}: quote a "
                                   "cell that holds the delimiter", reader.line_num)
        rows.append((reader.line_num, row))
    if not rows:
        raise InputError(path, "file has no rows (a header row, then one row per pair)")
    return rows


def columns_of(path, given: Columns, found: Counter, notes: Decisions) -> Columns:
    """The columns to read: the given ones, else the first common name present (counted); every missing one in
    one error, with the columns the file has."""
    chosen, missing = {}, []
    for what, names in COMMON.items():
        name = getattr(given, what) or next((n for n in names if n in found), "")
        if getattr(given, what) and name not in found or not name and what != "id":
            missing.append(f"no {what} column " + (f"'{name}'" if name else f"(looked for {', '.join(names)})")
                           + f": --{what}-column NAME names it")
        elif name and not getattr(given, what):
            notes.count(f"{what} column: '{name}' (--{what}-column names another)")
        chosen[what] = name
    if missing:
        raise InputError(path, "; ".join(missing) + " (columns: " + ", ".join(f"{k} ({n} rows)" for k, n in
                                                                        found.items()) + ")")
    return Columns(**chosen)


def pairs(pairs_path, ids: dict[str, str], tools: Tools, notes: Decisions, given: Columns) -> A.ExternalSet:
    """A pairs file over its tools (``ids``: tool name -> catalog id of ``tools``) as one set (no candidate lists:
    every request sees the whole catalog)."""
    rows = records(Path(pairs_path))
    col = columns_of(pairs_path, given, Counter(k for _, r in rows for k in r), notes)
    unknown, unknown_at, first, out = Counter(), None, {}, A.Rows()
    for lineno, rec in rows:
        text, name = rec.get(col.text), str(rec.get(col.tool) or "").strip()
        if not isinstance(text, str) or not text.strip():
            raise InputError(pairs_path, "no request text (a non-empty string)", lineno, col.text)
        if name and name not in ids:
            unknown[name] += 1
            unknown_at = unknown_at or (lineno, name)
            continue
        key = (str(rec.get(col.id) or "").strip() if col.id else "") or text.strip()
        if key in first:
            earlier = first[key]
            same = earlier["gold_tool"] == (ids[name] if name else None)
            notes.count("repeated (request, tool) pairs: read once" if same
                        else "requests with another tool on a later row: the first row's tool is the gold one")
            continue
        uid, lang = str(rec.get(col.id) or f"p{lineno:05d}"), notes.lang(pairs_path, lineno, text, col.text)
        if lang is None:
            continue
        utt = A.utterance(uid, uid, lang, text, ids[name] if name else None, "pair" if name else "no_tool")
        first[key] = utt
        out.add(with_extras(utt, [], notes.meta(rec, {col.text, col.tool, col.id})), [], uid, utt["subtype"])
    if unknown:
        raise InputError(pairs_path, f"{sum(unknown.values())} rows name {len(unknown)} tools the tools file does "
                                     f"not have (first: '{unknown_at[1]}')", unknown_at[0], col.tool)
    return out.done("pairs", notes.forced or "en", tools)
