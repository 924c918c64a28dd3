"""The hand-written schema checks (toolgate.core.schemas.plain) pass only what the schemas accept: every field of a
router manifest and of catalog rows is replaced, removed or joined by another, and whatever the check passes
jsonschema must accept too (the check may refuse more: such a row takes jsonschema's way)."""
import copy
import json
from pathlib import Path

import jsonschema

from router_fixtures import artifact, catalog  # noqa: F401  (fixture)
from toolgate.core.schemas import plain, schema

ROOT = Path(__file__).resolve().parents[2]
VALUES = (None, True, False, 0, -1, 1.5, 9, 2, "", " ", "x", "ab", "E0", "bm25", "dense", "probability", "a" * 64,
          "a" * 129, "a" * 201, "a" * 1001, "a" * 4001,  # each just over a length limit of the catalog schema
          [], ["x"], [1], {}, {"en": "x"})


def _paths(obj, at=()):
    yield at
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        yield from _paths(v, (*at, k))


def _mutants(obj):
    for path in list(_paths(obj)):
        if not path:
            continue
        for value in (*VALUES, "drop", "extra"):
            m = copy.deepcopy(obj)
            node = m
            for k in path[:-1]:
                node = node[k]
            if value == "drop":
                del node[path[-1]]
            elif value == "extra":
                if not isinstance(node[path[-1]], dict):
                    continue
                node[path[-1]]["zz"] = 1
            else:
                node[path[-1]] = value
            yield m


def _holds(name: str, obj) -> int:
    """How many mutants of ``obj`` the check passes; each of them is valid under the schema."""
    check, validator = plain.PLAIN[name], jsonschema.Draft202012Validator(schema(name))
    assert check(obj) and validator.is_valid(obj)
    passed = 0
    for m in _mutants(obj):
        if check(m):
            passed += 1
            assert validator.is_valid(m), json.dumps(m)[:300]
    return passed


def test_the_manifest_check_passes_nothing_the_router_schema_refuses(artifact):
    assert _holds("router", json.loads((artifact / "router.json").read_text())) > 0


def test_the_manifest_check_holds_an_examples_model_with_n_grams_to_the_schema(artifact):
    m = json.loads((artifact / "router.json").read_text())
    m["examples"] = {"encoder": "use", "classes": ["set_alarm", ""], "c": 10.0,
                     "chars": {"ngram": [1, 4], "vocabulary": [" ", " a", "ab"]}}
    assert _holds("router", m) > 0
    assert not plain.router({**m, "examples": {**m["examples"], "chars": {"ngram": [1.5, 4], "vocabulary": []}}})


def test_the_catalog_check_passes_nothing_the_catalog_schema_refuses():
    rows = [json.loads(line) for line in (ROOT / "data/catalogs/device70/catalog.jsonl").read_text(encoding="utf-8")
            .splitlines() if line.strip()]
    assert all(plain.catalog(r) for r in rows + catalog())
    with_enum = next(r for r in rows if any("enum" in p for p in r["parameters"]["properties"].values()))
    assert all(_holds("catalog", r) > 0 for r in (with_enum, catalog()[0]))


def test_the_router_ranker_types_are_the_registry_s_exportable_kinds():
    """plain.ROUTER_RANKERS (which plain cannot import from the registry) is the router schema's type enum, each
    type with the capability the registry gives it, and every lexical or encoder-gate kind is there."""
    from toolgate.core.rankers import RANKERS, kinds

    assert list(plain.ROUTER_RANKERS) == schema("router")["$defs"]["ranker"]["properties"]["type"]["enum"]
    assert all(getattr(RANKERS[t], part) for t, part in plain.ROUTER_RANKERS.items())
    assert sorted(plain.ROUTER_RANKERS) == sorted(kinds("lexical") + kinds("encoder_gate"))


def test_the_catalog_checks_length_limits_are_the_schemas():
    """plain.py cannot read the schema (a router loads without PyYAML): its limits are held to the schema's here."""
    s = schema("catalog")
    props, defs = s["properties"], s["$defs"]
    param = props["parameters"]["properties"]["properties"]
    assert plain.ID_CHARS == props["id"]["maxLength"] == param["propertyNames"]["maxLength"]
    assert plain.NAME_CHARS == defs["langtext"]["additionalProperties"]["maxLength"] == props["group"]["maxLength"] \
        == props["domain"]["maxLength"] == props["keywords"]["additionalProperties"]["items"]["maxLength"] \
        == param["additionalProperties"]["properties"]["type"]["maxLength"]
    assert plain.DOC_CHARS == defs["langdoc"]["additionalProperties"]["maxLength"] \
        == param["additionalProperties"]["properties"]["description"]["anyOf"][0]["maxLength"]
    assert plain.PHRASE_CHARS == defs["phrases"]["items"]["properties"]["text"]["maxLength"]
    enum = param["additionalProperties"]["properties"]["enum"]
    assert plain.ITEMS == enum["maxItems"] == param["maxProperties"] == props["keywords"]["additionalProperties"]["maxItems"]
    assert plain.NAME_CHARS == enum["items"]["maxLength"]
    row = {"id": "a", "kind": "action", "group": "g", "domain": "d", "names": {"en": "A"}, "descriptions": {"en": "A"},
           "keywords": {"en": ["k"] * (plain.ITEMS + 1)},
           "parameters": {"type": "object", "properties": {"p": {"type": "string", "description": "x", "enum": ["v"]}}}}
    assert plain.catalog({**row, "keywords": {}}) and not plain.catalog(row)
    row["keywords"] = {}
    row["parameters"]["properties"]["p"]["enum"] = ["v" * (plain.NAME_CHARS + 1)]
    assert not plain.catalog(row)
