"""The utterance set: requests labelled against a catalog.

An utterance set is a JSONL file of requests (``docs/formats.md``), each with a ``gold_outcome``. ``action`` and
``ask`` are the in-catalog label (``IN_CATALOG``): ``gold_tool`` names a catalog action, and an ``ask`` lists
its ``missing_slots``. ``chat`` and ``delegate`` are out of catalog: ``gold_tool`` null, slice ``out``
(``OUT_SUBTYPES`` maps an out-of-catalog subtype to its gold). The main set is every row but the extra
``mismatch_hard`` slice.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from .core.catalog import actions, load_catalog, mutating_known
from .core.errors import InputError, Problems
from .core.io import LANGS, read_jsonl, write_json
from .core.schemas import check_schema

IN_CATALOG = ("action", "ask")
OUT_SUBTYPES = {"external_service": "delegate", "multistep": "delegate", "chat": "chat"}  # out-of-catalog subtype: gold
UNKNOWN_SLOT = "unknown"  # missing_slots of an ask request whose source does not say which parameter is missing


def load_utterances(path, catalog: list[dict], langs=LANGS) -> list[dict]:
    """Utterance rows in file order, validated against the schema and the catalog."""
    problems = Problems()  # bad JSON lines and bad rows, reported in one error
    return check_utterances(read_jsonl(path, problems), catalog, path, langs, problems)


def load_inputs(catalog_path, utterances_path, langs=LANGS) -> tuple[list[dict], list[dict]]:
    """The catalog and the utterances checked against it."""
    catalog = load_catalog(catalog_path, langs)
    return catalog, load_utterances(utterances_path, catalog, langs)


def main_set(rows: list[dict]) -> list[dict]:
    """The paper's design: every row except the extra ``mismatch_hard`` slice, which is only reported beside it."""
    return [r for r in rows if r["slice"] != "mismatch_hard"]


def is_in_catalog(outcome: str) -> bool:
    """The in-catalog label: is a gold outcome a catalog action (executed or asked about)? What the gates predict."""
    return outcome in IN_CATALOG


def in_catalog(rows: list[dict]) -> list[dict]:
    """The rows whose gold outcome is in-catalog."""
    return [r for r in rows if is_in_catalog(r["gold_outcome"])]


def check_utterances(numbered_rows, catalog: list[dict], path, langs=LANGS,
                     problems: Problems | None = None) -> list[dict]:
    """Validate (line number, row) pairs; ``path`` names the source in errors, every bad row in one error (with
    ``problems``: beside those found before)."""
    acts = {t["id"]: t for t in actions(catalog)}
    seen: dict[str, int] = {}
    rows, problems = [], Problems() if problems is None else problems
    for lineno, obj in numbered_rows:
        with problems.each():
            _check_row(path, lineno, obj, acts, langs, seen)
            rows.append(obj)
    problems.done()
    return rows


def _check_row(path, lineno: int, obj: dict, acts: dict, langs, seen: dict) -> None:
    """One row against the schema and the catalog (``seen``: utterance id -> its first line, updated); every
    problem of the row in one error (each part below is checked on its own)."""
    check_schema(path, lineno, obj, "utterances")
    problems = Problems()
    uid = obj["utterance_id"]
    with problems.each():
        if uid in seen:
            raise InputError(path, f"duplicate utterance_id '{uid}' (first on line {seen[uid]})", lineno, "utterance_id")
    seen.setdefault(uid, lineno)
    with problems.each():
        if obj["lang"] not in langs:
            raise InputError(path, f"unknown language code '{obj['lang']}' (known: {', '.join(langs)})", lineno, "lang")
    with problems.each():
        _check_gold(path, lineno, obj, acts)
    with problems.each():
        _check_candidates(path, lineno, obj, acts)
    problems.done()


def _check_gold(path, lineno: int, obj: dict, acts: dict) -> None:
    """The gold outcome, tool, slice and missing slots agree with each other and with the catalog."""
    outcome, tool = obj["gold_outcome"], obj["gold_tool"]
    if is_in_catalog(outcome):
        if tool is None:
            raise InputError(path, f"gold_outcome '{outcome}' needs a gold_tool", lineno, "gold_tool")
        if tool not in acts:
            raise InputError(path, f"unknown gold_tool '{tool}' (not an action in the catalog)", lineno, "gold_tool")
        if obj["slice"] == "out":
            raise InputError(path, f"slice 'out' contradicts gold_outcome '{outcome}'", lineno, "slice")
    else:
        if tool is not None:
            raise InputError(path, f"gold_outcome '{outcome}' must have gold_tool null", lineno, "gold_tool")
        if obj["slice"] != "out":
            raise InputError(path, f"gold_outcome '{outcome}' needs slice 'out'", lineno, "slice")
    missing = obj["missing_slots"]
    if (outcome == "ask") != bool(missing):
        raise InputError(path, "missing_slots must be non-empty exactly when gold_outcome is 'ask'", lineno, "missing_slots")
    if missing:
        required = set(acts[tool]["parameters"].get("required", []))
        bad = [m for m in missing if m not in required and m != UNKNOWN_SLOT]
        if bad:
            raise InputError(path, f"'{bad[0]}' is not a required parameter of '{tool}'", lineno, "missing_slots")


def _check_candidates(path, lineno: int, obj: dict, actions: dict) -> None:
    """A request's own candidate list names catalog actions and holds its gold tool."""
    cands = obj.get("candidates")
    if cands is None:
        return
    unknown = [c for c in cands if c not in actions]
    if unknown:
        raise InputError(path, f"unknown candidate '{unknown[0]}' (not an action in the catalog)", lineno, "candidates")
    if obj["gold_tool"] is not None and obj["gold_tool"] not in cands:
        raise InputError(path, f"gold_tool '{obj['gold_tool']}' is not among the request's candidates", lineno,
                         "candidates")


def summarize(catalog: list[dict], rows: list[dict] | None = None) -> dict:
    """Counts of a catalog and (optionally) an utterance set, for reports and logs."""
    acts = actions(catalog)
    out = {"tools": len(catalog), "actions": len(acts), "routes": len(catalog) - len(acts),
           "mutating_actions": sum(t["mutating"] for t in acts) if mutating_known(catalog) else None}
    if rows is not None:
        out["utterances"] = len(rows)
        out["pairs"] = len({r["pair_id"] for r in rows})
        out["with_candidates"] = sum("candidates" in r for r in rows)
        for key in ("slice", "gold_outcome", "lang", "subtype"):
            out[f"by_{key}"] = dict(sorted(Counter(r[key] for r in rows).items()))
    return out


def validate_files(catalog_path, utterances_path, out_path, langs=LANGS) -> dict:
    """Validate both inputs and record their counts and checksums in ``out_path``."""
    from . import __version__

    catalog = load_catalog(catalog_path, langs)
    rows = load_utterances(utterances_path, catalog, langs)
    summary = summarize(catalog, rows)
    summary["files"] = {str(p): hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in (catalog_path, utterances_path)}
    summary["toolgate_version"] = __version__
    write_json(out_path, summary)
    return summary
