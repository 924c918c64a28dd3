"""Generic file I/O: strict readers (UTF-8 text, JSON, JSONL, YAML) and atomic writers.

Every problem with an input file raises :class:`~toolgate.core.errors.InputError`
naming the file, the 1-based line and the field. Writers go through a temporary
file and ``os.replace`` so a failed run never leaves a half-written output.
What the rows mean lives elsewhere: the catalog in :mod:`toolgate.core.catalog`, the
utterance set in :mod:`toolgate.utterances`.
"""
from __future__ import annotations

import json
import os
import re
import stat
import sys
import tempfile
from functools import cache
from pathlib import Path

from .errors import InputError, Problems, field_path
from .lang import HANGUL, KO_VERB_FINAL, SYLLABLE
from .lang import LANGS as LANGS  # the languages a catalog is read in, which the studies import with the rest of io

# The largest input file read (a catalog, requests, a tools file): thousands of times the largest public set the
# project reads, and far below what would exhaust memory. /dev/zero or a FIFO is refused as no regular file first.
MAX_READ_BYTES = 256 * 1024 * 1024


def read_text(path) -> str:
    """A UTF-8 text file, or InputError saying why it cannot be read (no regular file, over MAX_READ_BYTES, the line
    of a byte that is not UTF-8)."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # /dev/zero reads for ever, a FIFO blocks until a writer comes
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # (a folder: open says so below)
            raise InputError(path, "not a regular file (a device or a FIFO): give a file")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_READ_BYTES + 1)
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from None
    if len(raw) > MAX_READ_BYTES:
        raise InputError(path, f"larger than the limit of {MAX_READ_BYTES // 2 ** 20} MiB an input file may have")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = exc.start - raw.rfind(b"\n", 0, exc.start)
        raise InputError(path, f"not UTF-8 (byte {column} of the line)", raw.count(b"\n", 0, exc.start) + 1) from None


def loads_json(text: str, path, lineno: int | None = None):
    """``json.loads``, or InputError naming the line and column of a syntax error (``lineno``: the text's line
    in the file, for one JSONL line)."""
    try:
        obj = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey:
        line, parts = _duplicate_at(text)
        raise InputError(path, f"duplicate key '{parts[-1]}' (JSON keeps the last value silently)",
                         line + (lineno or 1) - 1, field_path(parts)) from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON: {exc.msg} (column {exc.colno})", exc.lineno + (lineno or 1) - 1) from None
    except RecursionError:  # the decoder recurses once per level: [[[[...]]]] thousands deep exhausts the stack
        raise InputError(path, "malformed JSON: nested too deeply", lineno) from None
    except ValueError:  # int() refuses more digits than sys.get_int_max_str_digits() (4,300) and says not where
        raise _long_integer(text, path, lineno) from None
    if _SURROGATE_ESCAPE.search(text) and (where := _lone_surrogate(obj)) is not None:
        raise InputError(path, "a lone surrogate escape (\\ud800-\\udfff without its pair) is no text", lineno,
                         field_path(where))
    return obj


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(obj, path=()):
    """The path of the first string (key or value) holding a lone surrogate, which no UTF-8 file can hold; None."""
    if isinstance(obj, str):
        return path if _SURROGATE.search(obj) else None
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        if isinstance(k, str) and _SURROGATE.search(k):
            return (*path, ascii(k)[1:-1])  # the key as an escape: it cannot be printed
        if (found := _lone_surrogate(v, (*path, k))) is not None:
            return found
    return None


class _DuplicateKey(ValueError):
    """A key an object holds twice."""


def _unique_keys(pairs: list[tuple]) -> dict:
    out = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]')  # a string (braces inside it are its own), or a structural character


def _duplicate_at(text: str) -> tuple[int, list]:
    """(line, field path as keys and indexes) of the first key in ``text`` (JSON the decoder reads) that its
    object holds twice: the decoder's hook sees an object's pairs, not where they are. A key holding a newline is
    escaped, so an error naming it stays one line."""
    stack: list[dict] = []  # open containers: {"keys": a set (an object's) or None, "at": the current key or index}
    for m in _TOKEN.finditer(text):
        tok, top = m.group(), stack[-1] if stack else None
        if tok in "{[":
            stack.append({"keys": set() if tok == "{" else None, "at": None if tok == "{" else 0, "key": tok == "{"})
        elif tok in "}]":
            stack.pop()
        elif tok == ",":
            top["key"] = top["keys"] is not None
            if top["keys"] is None:
                top["at"] += 1
        elif tok[0] == '"' and top and top["key"]:
            key, top["key"] = json.loads(tok), False
            if key in top["keys"]:
                parts = [f["at"] for f in stack[:-1]] + [key]
                return (text.count("\n", 0, m.start()) + 1,
                        [k if not isinstance(k, str) or k.isprintable() else ascii(k)[1:-1] for k in parts])
            top["keys"].add(key)
            top["at"] = key
    raise AssertionError("no duplicate key in a text the decoder found one in")


class _LongInt(str):
    """The digits of an integer too long for int(), kept while its field is looked for."""


def _long_integer(text: str, path, lineno: int | None) -> InputError:
    """The InputError of the first integer in ``text`` longer than Python reads, naming its line and field."""
    limit = sys.get_int_max_str_digits()
    obj = json.loads(text, parse_int=lambda s: _LongInt(s) if len(s.lstrip("-")) > limit else 0)
    stack = [((), obj)]
    while not isinstance(stack[-1][1], _LongInt):  # depth first, in document order: the first one found
        at, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        stack += reversed([((*at, k), v) for k, v in items])
    at, digits = stack[-1]
    return InputError(path, f"integer of {len(digits.lstrip('-'))} digits; at most {limit} are read",
                      text.count("\n", 0, text.find(digits)) + (lineno or 1), field_path(at) or None)


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


def _unique_yaml_keys(root) -> None:
    """A ConstructorError at a mapping key given twice (PyYAML keeps the last value silently), read off the composed
    nodes, before a merge (``<<: *base``, whose keys a mapping may override) has copied any key."""
    import yaml

    stack, done = [root], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in done:
            continue
        done.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if (key.tag, key.value) in seen:
                        raise yaml.constructor.ConstructorError(None, None, f"duplicate key '{key.value}'",
                                                                key.start_mark)
                    seen.add((key.tag, key.value))
                stack += [key, value]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value


def read_yaml(path):
    """A YAML file's content, or InputError naming the line of a syntax error or of a value it cannot read."""
    import yaml

    try:
        loader = _yaml_loader()(read_text(path))
        try:  # composed once: its nodes checked for a key given twice, then constructed
            node = loader.get_single_node()
            _unique_yaml_keys(node)
            return None if node is None else loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(path, f"cannot parse YAML: {problem}", None if mark is None else mark.line + 1) from None
    except RecursionError:
        raise InputError(path, "cannot parse YAML: nested too deeply") from None


def read_jsonl(path, problems: Problems | None = None) -> list[tuple[int, dict]]:
    """(line number, object) for every non-blank line; strict UTF-8 and JSON. Every bad line is reported in one
    error; with ``problems`` (the caller's pass over the rows) they go there and the good lines are returned."""
    rows, bad = [], Problems() if problems is None else problems
    for lineno, text in enumerate(read_text(path).split("\n"), start=1):
        if not text.strip():
            continue
        with bad.each():
            obj = loads_json(text, path, lineno)
            if not isinstance(obj, dict):
                raise InputError(path, f"expected a JSON object, got {type(obj).__name__}", lineno)
            rows.append((lineno, obj))
    if problems is None:
        bad.done()
    if not rows and not bad.found:
        raise InputError(path, "file has no rows")
    return rows


_LETTERS = re.compile(r"[^\W\d_]+")


def script_lang(text: str) -> str | None:
    """The language a text's script reads as: ``ko`` when its words holding Hangul are at least as many as its
    Latin ones (a word: a run of letters; "Netflix에서" is Korean), ``en`` when the Latin ones are more, or, with no
    Hangul, when Latin letters are at least as many as the letters of any other script (a Japanese request naming an
    "iPhone" is not English); else None."""
    words = _LETTERS.findall(text)
    hangul = sum(bool(HANGUL.search(w)) for w in words)
    if hangul:
        latin = sum(not HANGUL.search(w) and any(ord(ch) < 0x250 for ch in w) for w in words)
        return "ko" if hangul >= latin else "en"
    latin = sum(ch.isalpha() and ord(ch) < 0x250 for ch in text)
    return "en" if latin and latin >= sum(ch.isalpha() for ch in text) - latin else None


def request_lang(text: str) -> str | None:
    """The language of a request: ``ko`` when it ends on a Korean verb or request ending, whatever it names in Latin
    letters before ("BTS Dynamite 틀어줘"), or on two Korean words; else :func:`script_lang`'s (a name at the end,
    "Send a text to 김민수", leaves an English request English)."""
    words = _LETTERS.findall(text)
    if words and SYLLABLE.search(words[-1]) and (KO_VERB_FINAL.search(words[-1])
                                                 or len(words) > 1 and SYLLABLE.search(words[-2])):
        return "ko"
    return script_lang(text)



# Unicode's Cc (U+0000-001F, U+007F-009F) less tab, newline and carriage return, and Cs (the surrogates): a test
# holds it to unicodedata.category over every code point; one regex search, not a category lookup per character
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def control_character(text: str) -> str | None:
    """The first character of ``text`` that a request may not hold: a C0 or C1 control character other than tab,
    newline and carriage return, or a lone surrogate; None when there is none. Format characters (BOM, ZWJ in
    emoji, soft hyphen, direction marks) occur in real text and are allowed."""
    m = _CONTROL.search(text)
    return m.group() if m else None


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


