"""What an importer decides where its source leaves a question open: each decision counted, none silent.

Language, unknown fields, earlier turns, empty candidate lists, tools sharing a name (docs/formats.md, 'Import
formats'); :class:`Decisions` counts them for ``import.json`` and the printed summary.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..core import io
from ..core.catalog import digest_named, function_name, tool_id
from ..core.errors import InputError, Problems
from ..external import adapters as A
from ..utterances import UNKNOWN_SLOT, is_in_catalog

EMPTY_CANDIDATES = ("catalog", "delegate")
OTHER_LANGS = ("skip", "keep", "error")  # a row whose script is neither Hangul nor Latin: left out, kept as en, or an error


class Decisions:
    """The counts of one import's decisions (import.json lists them sorted by what was decided)."""

    def __init__(self, lang: str | None, empty: str = "", other: str = "skip"):
        self.forced, self.empty, self.other = lang, empty, other  # the --empty-candidates, --other-langs policies
        self.counts: dict[str, int] = {}
        self.meta_fields: Counter = Counter()
        self.sees_none: set[str] = set()  # utterance ids offered no tools under --empty-candidates delegate
        self.ambiguous = 0                # gold delegate offered no tools, seeing the whole catalog instead

    def offered_none(self, path, lineno: int, field: str, uid: str, outcome: str) -> str:
        """The gold outcome of request ``uid`` offered an empty candidate list, by the ``--empty-candidates`` policy
        (``catalog``: as it was, the request sees the whole catalog, and a gold delegate is counted as ambiguous: a
        tool of the catalog may answer it; ``delegate``: it sees no tool and an in-catalog outcome becomes
        ``delegate``); an error when no policy is given."""
        if self.empty not in EMPTY_CANDIDATES:
            raise InputError(path, "empty candidate list: --empty-candidates catalog (the request sees the whole "
                                   "catalog) or delegate (it sees no tool: an out-of-catalog request) says what it "
                                   "means", lineno, field)
        if self.empty == "catalog":
            self.count("offered no tools: sees the whole catalog (--empty-candidates catalog)")
            self.ambiguous += outcome == "delegate"
            return outcome
        outcome = "delegate" if is_in_catalog(outcome) else outcome
        self.count(f"offered no tools: {outcome}, seeing no tool (--empty-candidates delegate)")
        self.sees_none.add(uid)
        return outcome

    def count(self, what: str, n: int = 1) -> None:
        if n:
            self.counts[what] = self.counts.get(what, 0) + n

    def lang(self, path, lineno: int, text: str, field: str = "text", declared=None) -> str | None:
        """A request's language: forced (each row whose script reads otherwise counted), else the one the row
        declares (``declared``: its ``lang`` field, a code of :data:`~toolgate.core.io.LANGS`), else read from its
        script; a script neither Hangul nor Latin by the ``--other-langs`` policy: None (the row is skipped,
        counted), ``en`` (kept, counted) or an error."""
        if declared not in (None, "") and not self.forced:
            if declared not in io.LANGS:
                raise InputError(path, f"unknown language '{declared}' (known: {', '.join(io.LANGS)})", lineno, "lang")
            self.count(f"language {declared}: declared by the row")
            return declared
        lang = io.request_lang(text)
        if self.forced:
            self.count(f"language {self.forced}: forced by --lang")
            self.count(f"language {self.forced}: forced by --lang over a row whose script reads "
                       f"{lang or 'neither ko nor en'}", lang != self.forced)
            return self.forced
        if lang is None:
            if self.other == "error":
                raise InputError(path, "the text's script is neither Hangul (ko) nor Latin (en) (--other-langs skip "
                                       "leaves such rows out, keep keeps them as en; --lang ko|en forces one)",
                                 lineno, field)
            self.count(f"rows in neither Hangul nor Latin script: {'left out' if self.other == 'skip' else 'kept as en'}"
                       f" (--other-langs {self.other})")
            return None if self.other == "skip" else "en"
        self.count(f"language {lang}: read from the script")
        return lang

    def meta(self, obj: dict, known) -> dict:
        """The fields of ``obj`` outside ``known``, counted; the row keeps them in ``meta``."""
        extra = {k: v for k, v in obj.items() if k not in known}
        self.meta_fields.update(extra.keys())
        self.count("rows with fields kept in meta (import.json: meta_fields)", bool(extra))
        return extra

    def info(self, names: dict[str, str]) -> dict:
        """What import.json records of these decisions, given the set's tool id -> original name map."""
        renamed = {tid: name for tid, name in names.items() if tid != tool_id(name)}
        digests = {tid: name for tid, name in names.items() if digest_named(name)}
        self.count("tools renamed: another definition under a name already taken (import.json: renamed_tools)",
                   len(renamed))
        self.count("tools whose name has no Latin letter or digit: their id is t_ and a digest of the name "
                   "(import.json: digest_ids)", len(digests))
        return {"decisions": dict(sorted(self.counts.items())), "meta_fields": dict(sorted(self.meta_fields.items())),
                "renamed_tools": renamed, "digest_ids": digests, "ambiguous_gold": self.ambiguous}


def json_lines(path, what: str, problems: Problems | None = None) -> list[tuple[int, dict]]:
    """(line, object) of a JSON Lines file of ``what``; a JSON list or object in its place is an error naming the
    shape expected and how to convert it. ``problems``: the caller's pass over the rows, which keeps the bad lines
    (else they raise here, all in one error)."""
    bad = Problems()
    rows = io.read_jsonl(path, bad)
    if bad.found:
        try:
            whole = io.loads_json(io.read_text(path), path)
        except InputError:
            whole = None
        if whole is not None:
            got = f"a JSON list of {len(whole)} items" if isinstance(whole, list) else "one JSON value over several lines"
            raise InputError(path, f"expected JSON Lines of {what} (one JSON object a line), got {got}: write one "
                                   "object a line, e.g. jq -c '.[]' FILE > FILE.jsonl")
    if problems is None:
        bad.done()
    else:
        problems.found += bad.found
    return rows


@dataclass(frozen=True)
class Line:
    """One row of a JSON Lines file and where it sits (what an error names)."""
    path: str | Path
    lineno: int
    obj: dict


def with_extras(utt: dict, context: list, meta: dict) -> dict:
    """An utterance row with its earlier turns and unread fields, each only where there are some."""
    return {**utt, **({"context": context} if context else {}), **({"meta": meta} if meta else {})}


class Tools(A.Tools):
    """:class:`~toolgate.external.adapters.Tools` where each definition takes its own language (unless forced)
    and each definition met again is counted as merged."""

    def __init__(self, notes: Decisions, domain: str):
        super().__init__(notes.forced or "en", domain)
        self.notes = notes

    def add(self, obj: dict, path="<tools>", lineno: int | None = None, field: str = "") -> str:
        fn = obj.get("function", obj)
        if not self.notes.forced:  # the language of its plain-string name and description (a map names its own)
            plain = " ".join(v for v in (fn.get("name"), fn.get("description")) if isinstance(v, str))
            self.lang = io.script_lang(plain) or "en"
        known = len(self.rows)
        tid = super().add(obj, path, lineno, field)
        self.notes.count("tool definitions merged with an identical one", len(self.rows) == known)
        return tid


def tool_object(path, lineno: int, field: str, obj):
    """A tool definition of a row: an OpenAI tool schema or a bare function, or either as a JSON string."""
    if isinstance(obj, str) and obj.lstrip()[:1] == "{":
        obj = json_field(path, lineno, field, obj)
    fn = obj.get("function", obj) if isinstance(obj, dict) else None
    if function_name(fn) is None:
        raise InputError(path, "not a tool definition with a function name", lineno, field)
    return obj


def json_field(path, lineno: int, field: str, text: str):
    """A field's value given as a JSON string, parsed (a syntax error names the field)."""
    try:
        return io.loads_json(text, path, lineno)
    except InputError as exc:
        raise InputError(exc.path, exc.message, lineno, field) from None


def request(path, lineno: int, field: str, value) -> tuple[str, list, list]:
    """(request text, earlier turns, later turns) of a text, or of a chat message list (BFCL's list of turns is
    flattened): the last user message, every message before it, and every message after it."""
    if isinstance(value, list):
        messages = [m for turn in value for m in (turn if isinstance(turn, list) else [turn])]
        users = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"
                 and isinstance(m.get("content"), str) and m["content"].strip()]
        if not users:
            raise InputError(path, "no user message in the conversation", lineno, field)
        return messages[users[-1]]["content"], messages[: users[-1]], messages[users[-1] + 1:]
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, "no request text (a non-empty string, or a message list with a user message)",
                         lineno, field)
    return value, [], []


def check_slots(path, lineno: int, field: str, slots: list[str], catalog: list[dict], tool: str) -> None:
    """Each missing slot of an ask request is a required parameter of its gold tool (or ``unknown``)."""
    required = next(t for t in catalog if t["id"] == tool)["parameters"]["required"]
    bad = [m for m in slots if m not in required and m != UNKNOWN_SLOT]
    if bad:
        raise InputError(path, f"'{bad[0]}' is not a required parameter of '{tool}' (required: "
                               f"{', '.join(required) or 'none'})", lineno, field)
