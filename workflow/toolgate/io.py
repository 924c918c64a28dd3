"""Loaders, validators and atomic writers for catalogs and utterances.

Every problem with an input file raises :class:`~toolgate.errors.InputError`
naming the file, the 1-based line and the field. Writers go through a temporary
file and ``os.replace`` so a failed run never leaves a half-written output.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import unicodedata
from collections import Counter
from functools import cache
from pathlib import Path

from .catalog import ACTION, actions
from .errors import InputError
from .schemas import check_schema

LANGS = ("ko", "en")
IN_CATALOG = ("action", "ask")
OUT_SUBTYPES = {"external_service": "delegate", "multistep": "delegate", "chat": "chat"}  # out-of-catalog subtype: gold
UNKNOWN_SLOT = "unknown"  # missing_slots of an ask request whose source does not say which parameter is missing


def read_text(path) -> str:
    """A UTF-8 text file, or InputError saying why it cannot be read (the line of a byte that is not UTF-8)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = exc.start - raw.rfind(b"\n", 0, exc.start)
        raise InputError(path, f"not UTF-8 (byte {column} of the line)", raw.count(b"\n", 0, exc.start) + 1) from None


def loads_json(text: str, path, lineno: int | None = None):
    """``json.loads``, or InputError naming the line and column of a syntax error (``lineno``: the text's line
    in the file, for one JSONL line)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON: {exc.msg} (column {exc.colno})", exc.lineno + (lineno or 1) - 1) from None
    except RecursionError:  # the decoder recurses once per level: [[[[...]]]] thousands deep exhausts the stack
        raise InputError(path, "malformed JSON: nested too deeply", lineno) from None
    except ValueError:  # int() refuses more digits than sys.get_int_max_str_digits() (4,300) and says not where
        raise _long_integer(text, path, lineno) from None


class _LongInt(str):
    """The digits of an integer too long for int(), kept while its field is looked for."""


def _long_integer(text: str, path, lineno: int | None) -> InputError:
    """The InputError of the first integer in ``text`` longer than Python reads, naming its line and field."""
    limit = sys.get_int_max_str_digits()
    obj = json.loads(text, parse_int=lambda s: _LongInt(s) if len(s.lstrip("-")) > limit else 0)
    stack = [("", obj)]
    while not isinstance(stack[-1][1], _LongInt):  # depth first, in document order: the first one found
        at, node = stack.pop()
        if isinstance(node, dict):
            stack += reversed([(f"{at}.{k}" if at else k, v) for k, v in node.items()])
        elif isinstance(node, list):
            stack += reversed([(f"{at}[{i}]", v) for i, v in enumerate(node)])
    at, digits = stack[-1]
    return InputError(path, f"integer of {len(digits.lstrip('-'))} digits; at most {limit} are read",
                      text.count("\n", 0, text.find(digits)) + (lineno or 1), at or None)


@cache
def _yaml_loader():
    """PyYAML's safe loader, where a value its constructors refuse (an integer past Python's digit limit, a date
    such as 2024-13-45) is a YAML error at that value's line rather than a bare ValueError. Built on first use:
    PyYAML is imported where a YAML file is read, never by a router (issue 37)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_object(self, node, deep=False):
            try:
                return super().construct_object(node, deep)
            except ValueError as exc:
                raise yaml.constructor.ConstructorError(None, None, str(exc), node.start_mark) from None

    return Loader


def read_yaml(path):
    """A YAML file's content, or InputError naming the line of a syntax error or of a value it cannot read."""
    import yaml

    try:
        return yaml.load(read_text(path), Loader=_yaml_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(path, f"cannot parse YAML: {problem}", None if mark is None else mark.line + 1) from None
    except RecursionError:
        raise InputError(path, "cannot parse YAML: nested too deeply") from None


def read_jsonl(path) -> list[tuple[int, dict]]:
    """(line number, object) for every non-blank line; strict UTF-8 and JSON."""
    rows = []
    for lineno, text in enumerate(read_text(path).split("\n"), start=1):
        if not text.strip():
            continue
        obj = loads_json(text, path, lineno)
        if not isinstance(obj, dict):
            raise InputError(path, f"expected a JSON object, got {type(obj).__name__}", lineno)
        rows.append((lineno, obj))
    if not rows:
        raise InputError(path, "file has no rows")
    return rows


def control_character(text: str) -> str | None:
    """The first character of ``text`` that a request may not hold: a C0 or C1 control character other than tab,
    newline and carriage return, or a lone surrogate; None when there is none. Format characters (BOM, ZWJ in
    emoji, soft hyphen, direction marks) occur in real text and are allowed."""
    return next((c for c in text if unicodedata.category(c) in ("Cc", "Cs") and c not in "\t\n\r"), None)


def _check_langs(path, lineno, obj, field, langs) -> None:
    for lang in obj[field]:
        if lang not in langs:
            raise InputError(path, f"unknown language code '{lang}' (known: {', '.join(langs)})", lineno, f"{field}.{lang}")


def load_catalog(path, langs=LANGS) -> list[dict]:
    """Catalog rows in file order, validated (schema, unique ids, languages)."""
    seen: dict[str, int] = {}
    tools = []
    for lineno, obj in read_jsonl(path):
        check_schema(path, lineno, obj, "catalog")
        if obj["id"] in seen:
            raise InputError(path, f"duplicate id '{obj['id']}' (first on line {seen[obj['id']]})", lineno, "id")
        seen[obj["id"]] = lineno
        for field in ("names", "descriptions", "keywords"):
            _check_langs(path, lineno, obj, field, langs)
        props = obj["parameters"]["properties"]
        for req in obj["parameters"].get("required", []):
            if req not in props:
                raise InputError(path, f"required parameter '{req}' is not a property", lineno, "parameters.required")
        tools.append(obj)
    if not actions(tools):
        raise InputError(path, "catalog has no tool of kind 'action'")
    flagged = ["mutating" in t for t in actions(tools)]
    if any(flagged) and not all(flagged):
        lineno = [seen[t["id"]] for t in actions(tools) if "mutating" not in t][0]
        raise InputError(path, "mutating flag missing (give it for every action or for none)", lineno, "mutating")
    return tools


def mutating_known(catalog: list[dict]) -> bool:
    """Do the catalog's actions carry ``mutating`` flags? (All or none do; see load_catalog.)"""
    return all("mutating" in t for t in actions(catalog))


MUTATING_NOTE = "not available: the catalog's actions have no mutating flags"


def load_utterances(path, catalog: list[dict], langs=LANGS) -> list[dict]:
    """Utterance rows in file order, validated against the schema and the catalog."""
    return check_utterances(read_jsonl(path), catalog, path, langs)


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


def check_utterances(numbered_rows, catalog: list[dict], path, langs=LANGS) -> list[dict]:
    """Validate (line number, row) pairs; ``path`` names the source in errors."""
    acts = {t["id"]: t for t in actions(catalog)}
    seen: dict[str, int] = {}
    rows = []
    for lineno, obj in numbered_rows:
        check_schema(path, lineno, obj, "utterances")
        uid = obj["utterance_id"]
        if uid in seen:
            raise InputError(path, f"duplicate utterance_id '{uid}' (first on line {seen[uid]})", lineno, "utterance_id")
        seen[uid] = lineno
        if obj["lang"] not in langs:
            raise InputError(path, f"unknown language code '{obj['lang']}' (known: {', '.join(langs)})", lineno, "lang")
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
        _check_candidates(path, lineno, obj, acts)
        missing = obj["missing_slots"]
        if (outcome == "ask") != bool(missing):
            raise InputError(path, "missing_slots must be non-empty exactly when gold_outcome is 'ask'", lineno, "missing_slots")
        if missing:
            required = set(acts[tool]["parameters"].get("required", []))
            bad = [m for m in missing if m not in required and m != UNKNOWN_SLOT]
            if bad:
                raise InputError(path, f"'{bad[0]}' is not a required parameter of '{tool}'", lineno, "missing_slots")
        rows.append(obj)
    return rows


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


_UMASK = os.umask(0)
os.umask(_UMASK)


def write_atomic(path, text: str) -> None:
    """Write text to path via a temporary file in the same folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; outputs get ordinary permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps_jsonl(rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def write_json(path, obj) -> None:
    write_atomic(path, json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def import_openai_tool(obj, lang: str = "en", group: str = "skill", domain: str = "imported",
                       where: tuple = ("<tools>", None, "")) -> dict:
    """The catalog row of an OpenAI tool schema or a BFCL function doc.

    Accepts ``{"type": "function", "function": {...}}`` or the bare
    ``{name, description, parameters}``. Names are kept as ids when they are
    snake_case; other characters (BFCL's dotted names) become underscores.
    ``mutating`` is unknown for foreign tools and left out. ``where``: (path, line, field) of the definition in
    its file; a part of the wrong type raises InputError naming the path, the line and the part's field under
    that field.
    """
    path, lineno, field = where
    fn = obj.get("function", obj) if isinstance(obj, dict) else None
    at = _field(field, "function") if fn is not obj else field
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        raise InputError(path, "tool has no function name", lineno, _field(at, "name"))
    params = _part(fn, "parameters", dict, "a JSON Schema object", (path, lineno, at)) or {}
    in_params = (path, lineno, _field(at, "parameters"))
    required = _part(params, "required", list, "a list of parameter names", in_params) or []
    if not all(isinstance(r, str) for r in required):
        raise InputError(path, "expected a list of parameter names", lineno, _field(at, "parameters.required"))
    props = {}
    for pname, spec in (_part(params, "properties", dict, "an object of parameters", in_params) or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        prop = {"type": str(spec.get("type", "string")), "description": str(spec.get("description", pname))}
        if isinstance(spec.get("enum"), list) and spec["enum"]:
            prop["enum"] = spec["enum"]
        props[pname] = prop
    desc = (_part(fn, "description", str, "a string", (path, lineno, at)) or fn["name"]).strip() or fn["name"]
    return {
        "id": tool_id(fn["name"]),
        "kind": ACTION,
        "group": group,
        "domain": domain,
        "names": {lang: fn["name"]},
        "descriptions": {lang: desc},
        "parameters": {"type": "object", "properties": props, "required": [r for r in required if r in props]},
        "keywords": {},
    }


def _field(*parts: str) -> str:
    """A dotted field path of the parts given (empty ones left out)."""
    return ".".join(filter(None, parts))


def _part(obj: dict, key: str, types, what: str, where: tuple):
    """``obj[key]`` (None when absent or null), or InputError when it is not ``what``; ``where``: the path, line
    and field of ``obj``."""
    value = obj.get(key)
    if value is None or isinstance(value, types):
        return value
    path, lineno, field = where
    raise InputError(path, f"expected {what}, got {type(value).__name__}", lineno, _field(field, key))


def tool_id(name: str) -> str:
    """A snake_case id for a foreign tool name (``math.gcd`` -> ``math_gcd``)."""
    s = re.sub(r"[^a-z0-9]+", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()).strip("_")
    return s if s and s[0].isalpha() else f"t_{s}"


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
    from . import __version__  # late: the package imports io at init

    catalog = load_catalog(catalog_path, langs)
    rows = load_utterances(utterances_path, catalog, langs)
    summary = summarize(catalog, rows)
    summary["files"] = {str(p): hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in (catalog_path, utterances_path)}
    summary["toolgate_version"] = __version__
    write_json(out_path, summary)
    return summary
