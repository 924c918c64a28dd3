"""Template banks (docs/formats.md): loading and validation, and rendering a template with its fillers.

Every problem names the bank file and the dotted field (``actions.set_alarm.match[2]``).
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..core import io
from ..core.catalog import actions
from ..core.errors import InputError
from ..core.lang import SYLLABLES
from ..utterances import OUT_SUBTYPES
from . import korean

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::([%s]+))?\}" % SYLLABLES)


def load_banks(folder, catalog: list[dict], langs=io.LANGS) -> dict:
    """Lexicons, per-action template banks and out-of-catalog banks, validated."""
    folder = Path(folder)
    lex_path = folder / "lexicons.yaml"
    lexicons = io.read_yaml(lex_path) if lex_path.exists() else {}
    for name, entries in lexicons.items():
        _check_fillers(lex_path, name, entries, langs)
    acts = {t["id"]: t for t in actions(catalog)}
    banks = {"lexicons": lexicons, "actions": {}, "out": {k: [] for k in OUT_SUBTYPES}, "files": {}}
    files = sorted(p for p in folder.glob("*.yaml") if p.name != "lexicons.yaml")
    if not files:
        raise InputError(folder, "no template bank files (*.yaml) in the folder")
    for path in files:
        banks["files"][path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
        doc = io.read_yaml(path) or {}
        unknown = set(doc) - {"actions", "out"}
        if unknown:
            raise InputError(path, "unknown top-level key", field=sorted(unknown)[0])
        for tool_id, bank in (doc.get("actions") or {}).items():
            where = f"actions.{tool_id}"
            if tool_id not in acts:
                raise InputError(path, f"'{tool_id}' is not an action in the catalog", field=where)
            if tool_id in banks["actions"]:
                raise InputError(path, f"'{tool_id}' has banks in two files", field=where)
            banks["actions"][tool_id] = _action_bank(path, where, bank, acts[tool_id], lexicons, langs)
        for subtype, entries in (doc.get("out") or {}).items():
            if subtype not in OUT_SUBTYPES:
                raise InputError(path, f"unknown out subtype (known: {', '.join(OUT_SUBTYPES)})", field=f"out.{subtype}")
            for i, entry in enumerate(entries or []):
                where = f"out.{subtype}[{i}]"
                _check_pair(path, where, entry, langs, extra={"tools"})
                slots = {name: _lexicon(path, where, name, lexicons) for name in _placeholders(entry, langs)}
                banks["out"][subtype].append({"texts": {l: entry[l] for l in langs}, "slots": slots,
                                               "tools": entry.get("tools", [])})
    missing = [a for a in acts if a not in banks["actions"]]
    if missing:
        raise InputError(folder, f"{len(missing)} catalog actions have no template bank, e.g. '{missing[0]}'")
    return banks


def _check_fillers(path, where, entries, langs) -> None:
    if not isinstance(entries, list) or not entries:
        raise InputError(path, "expected a non-empty list of {ko, en} fillers", field=where)
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or any(not str(e.get(l, "")).strip() for l in langs):
            raise InputError(path, f"filler needs non-empty {', '.join(langs)}", field=f"{where}[{i}]")


def _check_pair(path, where, entry, langs, extra=frozenset()) -> None:
    if not isinstance(entry, dict):
        raise InputError(path, "expected a mapping with one template per language", field=where)
    for lang in langs:
        if not isinstance(entry.get(lang), str) or not entry[lang].strip():
            raise InputError(path, "missing or empty template", field=f"{where}.{lang}")
    unknown = set(entry) - set(langs) - set(extra)
    if unknown:
        raise InputError(path, "unknown key", field=f"{where}.{sorted(unknown)[0]}")


def _placeholders(entry, langs) -> set[str]:
    names = [{m.group(1) for m in PLACEHOLDER.finditer(entry[l])} for l in langs]
    return set.union(*names)


def _lexicon(path, where, name, lexicons):
    if name not in lexicons:
        raise InputError(path, f"placeholder '{{{name}}}' is not a lexicon", field=where)
    return lexicons[name]


def _action_bank(path, where, bank, tool, lexicons, langs) -> dict:
    if not isinstance(bank, dict):
        raise InputError(path, "expected a mapping with slots, match and mismatch", field=where)
    slots = {}
    for name, spec in (bank.get("slots") or {}).items():
        if isinstance(spec, str):
            spec = _lexicon(path, f"{where}.slots.{name}", spec, lexicons)
        else:
            _check_fillers(path, f"{where}.slots.{name}", spec, langs)
        slots[name] = spec
    required = set(tool["parameters"].get("required", []))
    out = {"slots": slots}
    for slice_ in ("match", "mismatch", "mismatch_hard"):
        entries = bank.get(slice_) or []
        if not entries and slice_ != "mismatch_hard":  # the hard slice is optional per action
            raise InputError(path, "no templates", field=f"{where}.{slice_}")
        full, ask = [], []
        for i, entry in enumerate(entries):
            w = f"{where}.{slice_}[{i}]"
            _check_pair(path, w, entry, langs, extra={"args"})
            names = _placeholders(entry, langs)
            for name in names:
                if name not in slots:
                    raise InputError(path, f"placeholder '{{{name}}}' is not declared under slots", field=w)
            for lang in langs:
                if _placeholders({lang: entry[lang]}, [lang]) != names:
                    raise InputError(path, "the two languages use different placeholders", field=w)
            stated = names | set(entry.get("args") or {})
            template = {"texts": {l: entry[l] for l in langs}, "missing": sorted(required - stated)}
            (ask if template["missing"] else full).append(template)
        if not full and entries:
            raise InputError(path, "no template states every required parameter", field=f"{where}.{slice_}")
        out[slice_], out[f"{slice_}_ask"] = full, ask
    return out


def render(template: str, values: dict[str, dict], lang: str) -> str:
    """Fill ``{name}`` / ``{name:을}`` with the filler's text in ``lang``."""
    def sub(m):
        word = values[m.group(1)][lang]
        return korean.attach(word, m.group(2)) if m.group(2) and lang == "ko" else word
    return PLACEHOLDER.sub(sub, template)
