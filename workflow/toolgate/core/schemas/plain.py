"""Hand-written checks of router.schema.yaml and catalog.schema.yaml, for a router that loads without jsonschema.

Each check is at least as strict as its schema: what it passes is valid under the schema (tests/unit/test_schemas
mutates every field to hold it to that); what it does not pass goes to jsonschema, which names the field, so the
messages are the schema's. Stricter than the schema is allowed (an integral float, a pattern's trailing newline):
such a row only takes the slower way.
"""
from __future__ import annotations

import re

_SHA256 = re.compile("[0-9a-f]{64}")
_ID = re.compile("[a-z][a-z0-9]*(_[a-z0-9]+)*")
_LANG = re.compile("[a-z]{2}")
_TEXT = re.compile(r"\S")
# router.schema.yaml's ranker types by the part a router runs them in (the registry's capability); plain cannot
# import the registry (toolgate.core.rankers imports the schemas), so tests/unit/test_schemas_plain.py holds the
# two together.
ROUTER_RANKERS = {"bm25": "lexical", "dense": "encoder_gate"}


def _str(x, *allowed) -> bool:
    return type(x) is str and (not allowed or x in allowed)


def _int(x, lo: int | None = None, hi: int | None = None) -> bool:
    return type(x) is int and (lo is None or x >= lo) and (hi is None or x <= hi)


def _num(x, lo: float | None = None, hi: float | None = None) -> bool:
    return type(x) in (int, float) and (lo is None or x >= lo) and (hi is None or x <= hi)


def _obj(x, *required) -> bool:
    return type(x) is dict and all(k in x for k in required)


def _opt(x: dict, key: str, check) -> bool:
    return key not in x or check(x[key])


def _list(x, item, min_items: int = 0) -> bool:
    return type(x) is list and len(x) >= min_items and all(item(v) for v in x)


def _sha(x) -> bool:
    return type(x) is str and _SHA256.fullmatch(x) is not None


def _ranker(r) -> bool:
    """router.schema.yaml's ``$defs.ranker``."""
    return (_obj(r, "type", "variant") and _str(r["type"], *ROUTER_RANKERS) and _str(r["variant"], "E0", "E1")
            and _opt(r, "tokenizer", _str) and _opt(r, "k1", lambda v: _num(v, 0)) and _opt(r, "b", lambda v: _num(v, 0, 1))
            and (_encoder(r["encoder"]) if "encoder" in r else ROUTER_RANKERS[r["type"]] != "encoder_gate"))


def _encoder(e) -> bool:
    return (_obj(e, "backend") and _str(e["backend"]) and _opt(e, "model", _str)
            and _opt(e, "revision", lambda v: v is None or _str(v)))


def _gate(g) -> bool:
    if g is None:
        return True
    p = g.get("payload", 0) if type(g) is dict else 0
    return (_obj(g, "signal", "lexical", "top_k", "payload") and _str(g["signal"]) and _str(g["lexical"])
            and _int(g["top_k"], 1)
            and (p is None or (_obj(p, "features", "coef", "intercept") and _list(p["features"], _str)
                               and _list(p["coef"], _num) and _num(p["intercept"]))))


def _chars(c) -> bool:
    """router.schema.yaml's ``examples.chars``: none, or an n-gram span and its vocabulary."""
    return c is None or (_obj(c, "ngram", "vocabulary") and _list(c["ngram"], lambda v: _int(v, 1, 8))
                         and len(c["ngram"]) == 2 and _list(c["vocabulary"], lambda g: _str(g) and 1 <= len(g) <= 8))


def router(m) -> bool:
    """A manifest (router.json) this passes is valid under router.schema.yaml."""
    if not _obj(m, "format", "toolgate_version", "seed", "pipeline", "lexical", "text", "langs", "gate", "encoders",
                "calibrator", "thresholds", "catalog", "limits", "files", "sealed"):
        return False
    p, lex, text, cal, th, cat, lim, files = (m[k] for k in ("pipeline", "lexical", "text", "calibrator", "thresholds",
                                                             "catalog", "limits", "files"))
    probability = type(th) is dict and th.get("scale") == "probability"
    return (_int(m["format"], 3, 3) and _str(m["toolgate_version"]) and _int(m["seed"], 0) and _sha(m["sealed"])
            and _obj(p, "name", "kind", "ranker", "gate", "ranker_spec") and _str(p["name"])
            and _str(p["kind"], "band", "ladder", "examples") and _str(p["ranker"]) and (p["gate"] is None or _str(p["gate"]))
            and _opt(m, "examples", lambda e: _obj(e, "encoder", "classes", "c") and _str(e["encoder"])
                     and _list(e["classes"], _str) and _num(e["c"]) and e["c"] > 0
                     and _opt(e, "examples", lambda v: _int(v, 0)) and _opt(e, "negatives", lambda v: _int(v, 0))
                     and _opt(e, "chars", _chars))
            and _opt(m, "fallback", lambda f: _obj(f, "kind", "calibrator", "thresholds") and f["kind"] == "ladder"
                     and _obj(f["calibrator"], "method", "coef", "intercept")
                     and _obj(f["thresholds"], "execute", "confirm", "scale") and f["thresholds"]["scale"] == "pool_score")
            and _ranker(p["ranker_spec"]) and _gate(m["gate"])
            and type(m["encoders"]) is dict
            and all(_obj(e, "spec", "key", "texts_sha256", "exemplars") and _ranker(e["spec"]) and _str(e["key"])
                    and _sha(e["texts_sha256"]) and _int(e["exemplars"], 0) for e in m["encoders"].values())
            and _obj(lex, "name", "spec") and _str(lex["name"]) and _ranker(lex["spec"]) and ROUTER_RANKERS[lex["spec"]["type"]] == "lexical"
            and _obj(text, "ngram", "pad") and _int(text["ngram"], 1, 8) and type(text["pad"]) is bool
            and _list(m["langs"], lambda v: _str(v, "ko", "en"), 1)
            and _obj(cal, "method", "coef", "intercept") and _str(cal["method"], "platt") and _num(cal["coef"])
            and _num(cal["intercept"])
            and _obj(th, "execute", "confirm", "scale") and _str(th["scale"], "probability", "pool_score")
            and all(_num(th[k], *((0, 1) if probability else ())) for k in ("execute", "confirm"))
            and _obj(cat, "sha256") and _sha(cat["sha256"]) and _opt(cat, "source", _str)
            and _obj(lim, "max_chars", "top_k") and _int(lim["max_chars"], 1) and _int(lim["top_k"], 1)
            and _opt(lim, "tie_margin", lambda v: _num(v, 0, 1))
            and _obj(files, "bm25.index", "catalog.jsonl")
            and all(_obj(f, "bytes", "sha256") and _int(f["bytes"], 0) and _sha(f["sha256"]) for f in files.values()))


# catalog.schema.yaml's length limits (tests/unit/test_schemas_plain.py holds them equal to the schema's)
NAME_CHARS, DOC_CHARS, ID_CHARS, PHRASE_CHARS, ITEMS = 200, 4000, 128, 1000, 1000  # ITEMS: enum values, keywords
# of a language, parameters


def _text(x, limit: int) -> bool:
    """A string with a non-space character, at most ``limit`` characters."""
    return type(x) is str and len(x) <= limit and _TEXT.search(x) is not None


def _langtext(x, limit: int = NAME_CHARS) -> bool:
    """catalog.schema.yaml's ``$defs.langtext`` (``$defs.langdoc`` with limit DOC_CHARS): language code -> a text."""
    return type(x) is dict and len(x) >= 1 and all(_LANG.fullmatch(k) and _text(v, limit) for k, v in x.items())


def _parameter(x) -> bool:
    return (_obj(x, "type", "description") and _str(x["type"]) and len(x["type"]) <= NAME_CHARS
            and ((_str(x["description"]) and len(x["description"]) <= DOC_CHARS) or _langtext(x["description"], DOC_CHARS))
            and _opt(x, "enum", lambda v: type(v) is list and 1 <= len(v) <= ITEMS
                     and all(type(e) is not str or len(e) <= NAME_CHARS for e in v)))


CATALOG_FIELDS = frozenset(("id", "kind", "group", "domain", "mutating", "names", "descriptions", "parameters",
                            "keywords", "examples", "negatives"))


def _phrase(x) -> bool:
    """catalog.schema.yaml's ``$defs.phrases`` item: {text, lang}."""
    return (type(x) is dict and set(x) == {"text", "lang"} and _text(x["text"], PHRASE_CHARS)
            and type(x["lang"]) is str and _LANG.fullmatch(x["lang"]) is not None)


def catalog(t) -> bool:
    """A catalog row this passes is valid under catalog.schema.yaml."""
    if not _obj(t, "id", "kind", "group", "domain", "names", "descriptions", "parameters", "keywords") \
            or not CATALOG_FIELDS.issuperset(t):
        return False
    p, kw = t["parameters"], t["keywords"]
    return (_str(t["id"]) and len(t["id"]) <= ID_CHARS and _ID.fullmatch(t["id"]) is not None
            and _str(t["kind"], "action", "route")
            and _str(t["group"]) and 1 <= len(t["group"]) <= NAME_CHARS and _str(t["domain"])
            and 1 <= len(t["domain"]) <= NAME_CHARS
            and _opt(t, "mutating", lambda v: type(v) is bool) and _langtext(t["names"])
            and _langtext(t["descriptions"], DOC_CHARS)
            and _obj(p, "type", "properties") and p["type"] == "object" and type(p["properties"]) is dict
            and len(p["properties"]) <= ITEMS
            and all(len(k) <= ID_CHARS and _parameter(v) for k, v in p["properties"].items())
            and _opt(p, "required", lambda v: _list(v, _str) and len(set(v)) == len(v))
            and type(kw) is dict
            and all(_LANG.fullmatch(k) and _list(v, lambda s: _text(s, NAME_CHARS)) and len(v) <= ITEMS
                    for k, v in kw.items())
            and _opt(t, "examples", lambda v: _list(v, _phrase)) and _opt(t, "negatives", lambda v: _list(v, _phrase)))


PLAIN = {"router": router, "catalog": catalog}  # schema name -> its hand-written check
