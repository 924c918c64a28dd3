"""The tool catalog: loading and validation, actions and routes, mutating flags, tool ids, index texts.

A catalog is a JSONL file of tools (``docs/formats.md``); an entry of kind ``action`` is searchable, every other
one (kind ``route``) is a route step. Either every action carries a ``mutating`` flag or none does.

Index texts: ``E0`` = names + descriptions; ``E1`` = E0 + parameter names, parameter
descriptions, enum values and keywords (the second seed's "routing text").
Both variants concatenate every language of the experiment, in ``langs`` order.
"""
from __future__ import annotations

import hashlib
import re

from .errors import InputError, Problems
from .io import read_jsonl, request_lang
from .lang import LANGS, SYLLABLE
from .schemas import check_schema

VARIANTS = ("E0", "E1")
ID_FROM_NAME = 120  # an id made from a name: under the schema's 128, leaving room for a renamed tool's "_2"
DIGEST_ID = re.compile("t_[0-9a-f]{8}(?:_[0-9]+)?")  # the id of a name without Latin letters or digits (tool_id),
# or of a second such definition of the name (_2): it says nothing of what the tool does
ACTION = "action"  # the kind of a searchable entry; every other entry (kind "route") is a route step


def _lang_text(value, lang) -> str:
    return value if isinstance(value, str) else value.get(lang, "")


def index_text(tool: dict, variant: str = "E0", langs=("ko", "en")) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"unknown index text variant '{variant}' (known: {', '.join(VARIANTS)})")
    parts = [tool["names"].get(l, "") for l in langs] + [tool["descriptions"].get(l, "") for l in langs]
    if variant == "E1":
        props = tool["parameters"].get("properties", {})
        for name, spec in props.items():
            parts.append(name.replace("_", " "))
            descs = [_lang_text(spec.get("description", ""), l) for l in langs]
            parts.extend(dict.fromkeys(descs))  # a plain-string description is listed once
            parts.extend(str(v) for v in spec.get("enum", []))
        for l in langs:
            parts.extend(tool.get("keywords", {}).get(l, []))
    return " ".join(p for p in parts if p)


def is_action(tool: dict) -> bool:
    """Is a catalog entry a searchable action? Arrays of kinds (score matrices' columns) compare with ``ACTION``."""
    return tool["kind"] == ACTION


def actions(catalog: list[dict]) -> list[dict]:
    """The searchable actions (route entries excluded), in catalog order."""
    return [t for t in catalog if is_action(t)]


def action_ids(catalog: list[dict]) -> list[str]:
    return [t["id"] for t in actions(catalog)]


def route_ids(catalog: list[dict]) -> list[str]:
    """The route entries' ids, in catalog order."""
    return [t["id"] for t in catalog if not is_action(t)]


def load_catalog(path, langs=LANGS) -> list[dict]:
    """Catalog rows in file order, validated (schema, unique ids, languages); every bad row in one error."""
    seen: dict[str, int] = {}
    tools, problems = [], Problems()
    for lineno, obj in read_jsonl(path, problems):
        with problems.each():
            _check_tool(path, lineno, obj, langs, seen)
            tools.append(obj)
    problems.done()
    if not actions(tools):
        raise InputError(path, "catalog has no tool of kind 'action'")
    flagged = ["mutating" in t for t in actions(tools)]
    if any(flagged) and not all(flagged):
        lineno = [seen[t["id"]] for t in actions(tools) if "mutating" not in t][0]
        raise InputError(path, "mutating flag missing (give it for every action or for none)", lineno, "mutating")
    return tools


def _check_tool(path, lineno: int, obj: dict, langs, seen: dict) -> None:
    """One catalog row (``seen``: id -> its first line, updated); every problem of the row in one error."""
    check_schema(path, lineno, obj, "catalog")
    problems = Problems()
    with problems.each():
        if obj["id"] in seen:
            raise InputError(path, f"duplicate id '{obj['id']}' (first on line {seen[obj['id']]})", lineno, "id")
    seen.setdefault(obj["id"], lineno)
    known = f"(known: {', '.join(langs)})"
    used = [(f"{field}.{lang}", lang) for field in ("names", "descriptions", "keywords") for lang in obj[field]]
    used += [(f"{field}[{k}].lang", phrase["lang"]) for field in ("examples", "negatives")
             for k, phrase in enumerate(obj.get(field, []))]
    for where, lang in used:
        with problems.each():
            if lang not in langs:
                raise InputError(path, f"unknown language code '{lang}' {known}", lineno, where)
    with problems.each():
        if obj.get("examples") and obj["kind"] != ACTION:
            raise InputError(path, "only an action carries examples (a route entry's are the generic bank's)",
                             lineno, "examples")
    props = obj["parameters"]["properties"]
    for req in obj["parameters"].get("required", []):
        with problems.each():
            if req not in props:
                raise InputError(path, f"required parameter '{req}' is not a property", lineno, "parameters.required")
    problems.done()


def mutating_known(catalog: list[dict]) -> bool:
    """Do the catalog's actions carry ``mutating`` flags? (All or none do; see load_catalog.)"""
    return all("mutating" in t for t in actions(catalog))


MUTATING_NOTE = "not available: the catalog's actions have no mutating flags"


def import_openai_tool(obj, lang: str = "en", group: str = "skill", domain: str = "imported",
                       where: tuple = ("<tools>", None, "")) -> dict:
    """The catalog row of an OpenAI tool schema or a BFCL function doc.

    Accepts ``{"type": "function", "function": {...}}`` or the bare
    ``{name, description, parameters}``. Names are kept as ids when they are
    snake_case; other characters (BFCL's dotted names) become underscores.
    A name or description is a string (in ``lang``), a map language -> text (``{"en": ..., "ko": ...}``),
    and/or a field per language (``description_ko``, ``name_en``): :func:`lang_texts`.
    ``mutating`` is unknown for foreign tools and left out. ``examples`` and ``negatives``, where the definition
    carries them (beside ``name``), are kept: :func:`phrases`. ``where``: (path, line, field) of the definition in
    its file; a part of the wrong type raises InputError naming the path, the line and the part's field under
    that field.
    """
    path, lineno, field = where
    fn = obj.get("function", obj) if isinstance(obj, dict) else None
    at = _field(field, "function") if fn is not obj else field
    name = function_name(fn)
    if name is None:
        raise InputError(path, "tool has no function name", lineno, _field(at, "name"))
    params = _part(fn, "parameters", dict, "a JSON Schema object", (path, lineno, at)) or {}
    in_params = (path, lineno, _field(at, "parameters"))
    required = _part(params, "required", list, "a list of parameter names", in_params) or []
    if not all(isinstance(r, str) for r in required):
        raise InputError(path, "expected a list of parameter names", lineno, _field(at, "parameters.required"))
    props = {}
    for pname, spec in (_part(params, "properties", dict, "an object of parameters", in_params) or {}).items():
        at_prop = (path, lineno, _field(at, "parameters.properties", pname))
        if not isinstance(spec, dict):
            raise InputError(path, f"expected a JSON Schema object, got {type(spec).__name__}", lineno, at_prop[2])
        text = _part(spec, "description", (str, dict), "a text, or a text per language", at_prop) or pname
        texts = {k: v for k, v in text.items() if k in LANGS and isinstance(v, str) and v.strip()} \
            if isinstance(text, dict) else {}
        prop = {"type": str(spec.get("type", "string")), "description": texts or str(text)}
        if isinstance(spec.get("enum"), list) and spec["enum"]:
            prop["enum"] = spec["enum"]
        props[pname] = prop
    # a Korean name written as an identifier (음악_재생) is words to the rankers; a Latin one stays as its source has it
    names = {k: v.replace("_", " ") if SYLLABLE.search(v) else v
             for k, v in lang_texts(fn, "name", lang, (path, lineno, at)).items()}
    descs = lang_texts(fn, "description", lang, (path, lineno, at)) or {lang: name}
    row = {
        "id": tool_id(name),
        "kind": ACTION,
        "group": group,
        "domain": domain,
        "names": names,
        "descriptions": descs,
        "parameters": {"type": "object", "properties": props, "required": [r for r in required if r in props]},
        "keywords": {},
    }
    beside = {key for key in ("examples", "negatives") if fn is not obj and key in obj}  # in the wrapper
    for key in ("examples", "negatives"):  # inside the function, or beside it in the wrapper: either, not both
        if key in beside and key in fn:
            raise InputError(path, f"{key} given twice, beside 'function' and inside it: give them once", lineno,
                             _field(field, key))
        holder, where = (obj, (path, lineno, field)) if key in beside else (fn, (path, lineno, at))
        if found := phrases(holder, key, lang, where):
            row[key] = found
    try:
        check_schema(path, lineno, row, "catalog")
    except InputError as exc:  # named at the definition's own fields: the row is not written yet
        problems = Problems()
        for each in exc.problems:
            source, message = _source_field(each.field or "", each.message)
            with problems.each():
                raise InputError(path, message, lineno,
                                 _field(field if source.split("[")[0] in beside else at, source)) from None
        problems.done()
    return row


def _source_field(field: str, message: str) -> tuple[str, str]:
    """The field of an OpenAI tool definition that a catalog row's ``field`` was made from, and the message with the
    language of a name's or description's text (given as a string, a map or a field per language)."""
    top, _, lang = field.partition(".")
    if top in ("names", "descriptions"):
        return top[:-1], f"its {lang} text: {message}"
    return field, message


def phrases(fn: dict, key: str, lang: str, where: tuple) -> list[dict]:
    """A tool definition's ``examples`` or ``negatives`` as catalog rows hold them ({text, lang}): a list of
    requests, each a string (its language read from its script, as a request's is; else ``lang``) or ``{text,
    lang}``; InputError names the item that is neither."""
    path, lineno, at = where
    out = []
    for i, item in enumerate(_part(fn, key, list, "a list of requests", where) or []):
        item = {"text": item, "lang": request_lang(item) or lang} if isinstance(item, str) else item
        if not (isinstance(item, dict) and set(item) == {"text", "lang"} and isinstance(item["text"], str)
                and item["text"].strip() and item["lang"] in LANGS):
            raise InputError(path, f"expected a request: a non-empty string, or {{text, lang}} with lang one of "
                             f"{', '.join(LANGS)}", lineno, f"{_field(at, key)}[{i}]")
        out.append(item)
    return out


def function_name(fn) -> str | None:
    """The name a tool definition is known by (its id, and what requests name it by): ``name`` when a string, of a
    map per language its English one (else its first); None when it has none."""
    name = fn.get("name") if isinstance(fn, dict) else None
    if isinstance(name, dict):
        name = name.get("en", next(iter(name.values()), None))
    return name if isinstance(name, str) and name.strip() else None


def lang_texts(fn: dict, key: str, lang: str, where: tuple) -> dict[str, str]:
    """A tool's ``key`` (name, description) per language: a string (in ``lang``) or a map language -> text, and a
    field per language (``description_ko``) beside either; two different texts for one language are an error.
    ``where``: (path, line, field) of ``fn``."""
    path, lineno, at = where
    value, texts = fn.get(key), {}
    if isinstance(value, dict):
        texts = {k: v.strip() for k, v in value.items() if isinstance(v, str) and v.strip()}
        bad = [k for k, v in value.items() if k not in LANGS or not isinstance(v, str)]
        if bad:
            raise InputError(path, f"expected a text per language ({', '.join(LANGS)})", lineno,
                             _field(at, key, str(bad[0])))
    elif _part(fn, key, str, "a string or a map language -> text", where) and value.strip():
        texts[lang] = value.strip()
    for code in LANGS:
        other = _part(fn, f"{key}_{code}", str, "a string", where)
        if other and other.strip():
            if texts.get(code, other.strip()) != other.strip():
                raise InputError(path, f"two {code} texts: '{key}' and '{key}_{code}' (give the {code} one once)",
                                 lineno, _field(at, f"{key}_{code}"))
            texts[code] = other.strip()
    return texts


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


def _slug(name: str) -> str:
    """A name's Latin letters and digits in snake_case (``deleteFile`` -> ``delete_file``); empty when it has none."""
    return re.sub(r"[^a-z0-9]+", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()).strip("_")


def digest_named(name: str) -> bool:
    """Is ``name`` one :func:`tool_id` knows by a digest (no Latin letter or digit to make an id of)?"""
    return not _slug(name)


def tool_id(name: str) -> str:
    """A snake_case id for a foreign tool name (``math.gcd`` -> ``math_gcd``), at most :data:`ID_FROM_NAME`
    characters (a corpus entry's title can be a sentence); a name with no Latin letter or digit (``알람 설정``)
    gets ``t_`` and a digest of the name, so two such names stay apart."""
    s = _slug(name)
    if not s:
        return "t_" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]  # DIGEST_ID
    return (s if s[0].isalpha() else f"t_{s}")[:ID_FROM_NAME].rstrip("_")


def own_queries(catalog: list[dict], langs) -> list[str]:
    """Each action's name and description in each of ``langs`` where it has them: the catalog's own texts as
    requests (label-free in-catalog pseudo-requests)."""
    queries = (f"{t['names'].get(lang, '')} {t['descriptions'].get(lang, '')}".strip()
               for t in actions(catalog) for lang in langs)
    return [q for q in queries if q]
