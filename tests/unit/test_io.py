import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import tool, utterance, write_jsonl
from toolgate.core import io, schemas
from toolgate.core.catalog import import_openai_tool, load_catalog, mutating_known, tool_id
from toolgate.core.errors import InputError
from toolgate.utterances import load_utterances, summarize


def test_catalog_loads(tmp_path, small_catalog):
    tools = load_catalog(write_jsonl(tmp_path / "c.jsonl", small_catalog))
    assert [t["id"] for t in tools] == ["set_alarm", "make_call", "check_battery", "chat"]


def test_duplicate_id_names_file_line_field(tmp_path, small_catalog):
    path = write_jsonl(tmp_path / "c.jsonl", small_catalog + [tool("make_call")])
    with pytest.raises(InputError) as e:
        load_catalog(path)
    assert str(e.value) == f"{path}:5: field 'id': duplicate id 'make_call' (first on line 2)"


@pytest.mark.parametrize("mutate,field,msg", [
    (lambda t: t.pop("names"), "names", "missing required field"),
    (lambda t: t.update(kind="tool"), "kind", "is not one of"),
    (lambda t: t.update(id="SetAlarm"), "id", "does not match"),
    (lambda t: t["names"].update(fr="x"), "names.fr", "unknown language code"),
    (lambda t: t["descriptions"].update(en="   "), "descriptions.en", "does not match"),
    (lambda t: t.update(extra=1), "extra", "unknown field"),
    (lambda t: t["parameters"].update(required=["zzz"]), "parameters.required", "not a property"),
    (lambda t: t.update(examples=[{"text": "x", "lang": "en"}, {"text": "y"}]), "examples[1].lang",
     "missing required field"),
    (lambda t: t.update(negatives=[{"text": "x" * 5000, "lang": "en"}]), "negatives[0].text",
     "^(?!.*xxx).*: 5000 characters; at most 1000 are allowed$"),
    (lambda t: t["descriptions"].update(en="x" * 4001), "descriptions.en", ": 4001 characters; at most 4000 are allowed$"),
    (lambda t: t["names"].update(ko="가" * 201), "names.ko", ": 201 characters; at most 200 are allowed$"),
    (lambda t: t.update(id="a" * 129), "id", ": 129 characters; at most 128 are allowed$"),
])
def test_catalog_field_errors(tmp_path, mutate, field, msg):
    bad = tool("set_alarm")
    mutate(bad)
    path = write_jsonl(tmp_path / "c.jsonl", [tool("make_call"), bad])
    with pytest.raises(InputError, match=msg) as e:
        load_catalog(path)
    assert (e.value.line, e.value.field) == (2, field)


def test_every_problem_of_a_row_is_named(tmp_path):
    """Two schema problems and two after it (a language, a required parameter) on one line: four lines of one
    error, each with its field."""
    bad = tool("set_alarm")
    bad["descriptions"]["en"] = "x" * 4001
    bad["keywords"]["en"] = ["k" * 201]
    path = write_jsonl(tmp_path / "c.jsonl", [tool("make_call"), bad])
    with pytest.raises(InputError, match="^.*: 2 problems") as e:
        load_catalog(path)
    assert [(x.line, x.field) for x in e.value.problems] == [(2, "descriptions.en"), (2, "keywords.en[0]")]
    bad = tool("make_call")
    bad["names"]["fr"] = "appel"
    bad["parameters"]["required"] = ["zzz"]
    path = write_jsonl(tmp_path / "c.jsonl", [tool("make_call"), bad])
    with pytest.raises(InputError, match="^.*: 3 problems") as e:
        load_catalog(path)
    assert [(x.line, x.field) for x in e.value.problems] == [(2, "id"), (2, "names.fr"), (2, "parameters.required")]


def test_every_missing_and_unknown_key_of_a_row_is_named(tmp_path):
    bad = tool("set_alarm")
    del bad["names"], bad["descriptions"]
    bad.update(zz=1, yy=2)
    with pytest.raises(InputError, match="^.*: 4 problems") as e:
        load_catalog(write_jsonl(tmp_path / "c.jsonl", [bad]))
    assert sorted(x.field for x in e.value.problems) == ["descriptions", "names", "yy", "zz"]


def test_a_tool_definition_too_long_is_named_at_its_own_field():
    fn = {"name": "set_timer", "description": "x" * 4001,
          "parameters": {"type": "object", "properties": {"m": {"type": "integer", "description": "y" * 4001}}}}
    with pytest.raises(InputError) as e:
        import_openai_tool({"type": "function", "function": fn}, where=("tools.json", None, "[3]"))
    assert [(x.path, x.field, x.message) for x in e.value.problems] == [
        ("tools.json", "[3].function.description", "its en text: 4001 characters; at most 4000 are allowed"),
        ("tools.json", "[3].function.parameters.properties.m.description", "4001 characters; at most 4000 are allowed")]


def test_a_korean_identifier_name_is_named_in_words_and_keeps_its_digest_id():
    fn = {"name": "음악_재생", "description": "음악을 재생한다", "parameters": {"type": "object", "properties": {}}}
    row = import_openai_tool(fn, "ko")
    assert row["names"] == {"ko": "음악 재생"} and row["id"] == tool_id("음악_재생") != tool_id("음악 재생")
    assert import_openai_tool({**fn, "name": "get_weather"})["names"] == {"en": "get_weather"}


def test_a_wrappers_examples_are_named_where_they_are_and_keep_a_definition_apart():
    from toolgate.external.adapters import Tools

    fn = {"name": "play", "description": "Play music", "parameters": {"type": "object", "properties": {}}}
    with pytest.raises(InputError) as e:
        import_openai_tool({"type": "function", "function": fn, "examples": ["x" * 1001]}, where=("t.json", None, "[0]"))
    assert e.value.field == "[0].examples[0].text"  # beside 'function', where the user wrote it
    tools = Tools("en", "x")
    assert [tools.add({"type": "function", "function": fn}),
            tools.add({"type": "function", "function": fn, "examples": ["play some jazz"]})] == ["play", "play_2"]


def test_a_tools_examples_beside_its_function_are_kept_and_given_twice_refused():
    fn = {"name": "play", "description": "Play music", "parameters": {"type": "object", "properties": {}}}
    row = import_openai_tool({"type": "function", "function": fn, "examples": ["play some jazz", "음악 틀어 줘"]})
    assert row["examples"] == [{"text": "play some jazz", "lang": "en"}, {"text": "음악 틀어 줘", "lang": "ko"}]
    with pytest.raises(InputError, match="examples given twice") as e:
        import_openai_tool({"type": "function", "function": {**fn, "examples": ["x"]}, "examples": ["y"]},
                           where=("tools.json", None, "[0]"))
    assert e.value.field == "[0].examples"


def test_malformed_json_and_non_utf8(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_bytes(json.dumps(tool("a_b")).encode() + b"\n{not json\n")
    with pytest.raises(InputError, match="malformed JSON") as e:
        load_catalog(p)
    assert e.value.line == 2
    p.write_bytes(b'{"id": "\xff"}\n')
    with pytest.raises(InputError, match="not UTF-8") as e:
        load_catalog(p)
    assert e.value.line == 1


def test_read_yaml_names_the_file_and_line(tmp_path):
    p = tmp_path / "x.yaml"
    for text, line, msg in (("a: 1\nb: [\n", 3, "cannot parse YAML"), ("[" * 100000, None, "nested too deeply"),
                            (b"a: 1\nb: \xff\n", 2, r"not UTF-8 \(byte 4 of the line\)")):
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        with pytest.raises(InputError, match=msg) as e:
            io.read_yaml(p)
        assert (e.value.path, e.value.line) == (str(p), line)
    with pytest.raises(InputError, match="cannot read file: Is a directory"):
        io.read_yaml(tmp_path)


def _load_utts(tmp_path, catalog, rows):
    return load_utterances(write_jsonl(tmp_path / "u.jsonl", rows), catalog)


def test_utterances_load(tmp_path, small_catalog):
    rows = [utterance(1), utterance(1, lang="ko"), utterance(2, None, "delegate", "out"),
            utterance(3, "set_alarm", "ask", "mismatch", missing=["x"])]
    assert len(_load_utts(tmp_path, small_catalog, rows)) == 4


@pytest.mark.parametrize("row,field,msg", [
    (utterance(9, "fly_to_moon"), "gold_tool", "unknown gold_tool 'fly_to_moon'"),
    (utterance(9, "chat"), "gold_tool", "unknown gold_tool 'chat'"),  # a route is not an action
    ({**utterance(9), "text": "  \t"}, "text", "does not match"),
    (utterance(9, lang="fr"), "lang", "unknown language code 'fr'"),
    (utterance(9, "set_alarm", "delegate", "out"), "gold_tool", "must have gold_tool null"),
    (utterance(9, None, "action"), "gold_tool", "needs a gold_tool"),
    (utterance(9, None, "chat", "match"), "slice", "needs slice 'out'"),
    (utterance(9, "set_alarm", "ask"), "missing_slots", "non-empty exactly when"),
    (utterance(9, "set_alarm", "ask", missing=["y"]), "missing_slots", "not a required parameter"),
    (utterance(1), "utterance_id", "duplicate utterance_id"),
])
def test_utterance_errors(tmp_path, small_catalog, row, field, msg):
    path = write_jsonl(tmp_path / "u.jsonl", [utterance(1), row])
    with pytest.raises(InputError, match=msg) as e:
        load_utterances(path, small_catalog)
    assert (e.value.path, e.value.line, e.value.field) == (str(path), 2, field)


def test_every_problem_of_a_request_row_is_named(tmp_path, small_catalog):
    bad = {**utterance(1, "set_alarm", "ask", missing=["y"]), "lang": "fr", "candidates": ["make_call", "nope"]}
    path = write_jsonl(tmp_path / "u.jsonl", [utterance(1), bad])
    with pytest.raises(InputError, match="^.*: 4 problems") as e:
        load_utterances(path, small_catalog)
    assert [(x.line, x.field) for x in e.value.problems] == [(2, "utterance_id"), (2, "lang"), (2, "missing_slots"),
                                                          (2, "candidates")]


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_fuzz_any_bytes_load_or_input_error(tmp_path, blob):
    p = tmp_path / "fuzz.jsonl"
    p.write_bytes(blob)
    for load in (load_catalog, lambda q: load_utterances(q, [tool("set_alarm")])):
        try:
            load(p)
        except InputError:
            pass


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(["id", "kind", "names", "parameters", "utterance_id", "text", "lang"]),
                       st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2),
                                 st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2))))
def test_fuzz_structured_rows(tmp_path, obj):
    p = tmp_path / "fuzz.jsonl"
    p.write_text(json.dumps(obj) + "\n")
    for load in (load_catalog, lambda q: load_utterances(q, [tool("set_alarm")])):
        with pytest.raises(InputError):
            load(p)


def test_write_atomic_gives_ordinary_permissions(tmp_path):
    import os

    io.write_atomic(tmp_path / "x.txt", "hi")
    mode = (tmp_path / "x.txt").stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask and (tmp_path / "x.txt").read_text() == "hi"


def test_write_atomic_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out" / "x.json"

    class Boom:
        def __str__(self):
            raise RuntimeError("boom")

    with pytest.raises(TypeError):
        io.write_atomic(target, Boom())
    assert list((tmp_path / "out").iterdir()) == []


def test_import_openai_and_bfcl_tools():
    rows = [import_openai_tool(obj, lang="en") for obj in (
        {"type": "function", "function": {"name": "getWeather", "description": "Weather for a city.",
                                          "parameters": {"type": "object", "properties": {
                                              "city": {"type": "string", "description": "City"},
                                              "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}},
        {"name": "math.gcd", "description": "", "parameters": {"type": "dict", "properties": {}}},
    )]
    assert [r["id"] for r in rows] == ["get_weather", "math_gcd"]
    assert rows[0]["parameters"]["required"] == ["city"]
    assert rows[0]["parameters"]["properties"]["unit"]["enum"] == ["c", "f"]
    assert rows[1]["descriptions"]["en"] == "math.gcd"
    for lineno, row in enumerate(rows, 1):  # imported rows pass the catalog schema
        schemas.check_schema("<import>", lineno, row, "catalog")


def test_summarize_counts(small_catalog):
    s = summarize(small_catalog, [utterance(1), utterance(2, None, "chat", "out")])
    assert (s["actions"], s["routes"], s["mutating_actions"]) == (3, 1, 2)
    assert s["by_slice"] == {"match": 1, "out": 1}


@pytest.mark.parametrize("cands,field,msg", [
    (["make_call", "ghost"], "candidates", "unknown candidate 'ghost'"),
    (["make_call", "chat"], "candidates", "unknown candidate 'chat'"),  # a route entry is not a candidate tool
    (["make_call"], "candidates", "gold_tool 'set_alarm' is not among the request's candidates"),
    ([], "candidates", "should be non-empty"),
])
def test_candidate_errors(tmp_path, small_catalog, cands, field, msg):
    path = write_jsonl(tmp_path / "u.jsonl", [utterance(1), {**utterance(2), "candidates": cands}])
    with pytest.raises(InputError, match=msg) as e:
        load_utterances(path, small_catalog)
    assert (e.value.line, e.value.field) == (2, field)
    ok = {**utterance(2, None, "delegate", "out"), "candidates": ["make_call"]}  # cannot answer within its list
    assert load_utterances(write_jsonl(tmp_path / "ok.jsonl", [ok]), small_catalog)[0]["candidates"] == ["make_call"]


def test_mutating_flags_for_every_action_or_none(tmp_path, small_catalog):
    none = [{k: v for k, v in t.items() if k != "mutating"} for t in small_catalog]
    catalog = load_catalog(write_jsonl(tmp_path / "none.jsonl", none))
    assert not mutating_known(catalog) and summarize(catalog)["mutating_actions"] is None
    with pytest.raises(InputError, match="mutating flag missing") as e:
        load_catalog(write_jsonl(tmp_path / "some.jsonl", small_catalog[:1] + none[1:]))
    assert (e.value.line, e.value.field) == (2, "mutating")


LONG = "7" * 5000  # past Python's 4,300-digit limit of int(): json.loads raises a bare ValueError


def test_an_integer_too_long_to_read_names_its_line_and_field(tmp_path):
    with pytest.raises(InputError) as e:
        io.loads_json('{"a": [1,\n {"b": -' + LONG + "}]}", "x.json")
    assert (e.value.path, e.value.line, e.value.field) == ("x.json", 2, "a[1].b")
    assert e.value.message == "integer of 5000 digits; at most 4300 are read"
    p = tmp_path / "u.jsonl"
    p.write_text('{"a": 1}\n\n{"n": ' + LONG + "}\n")
    with pytest.raises(InputError) as e:
        io.read_jsonl(p)
    assert (e.value.line, e.value.field) == (3, "n")
    for text, line, msg in (("a: 1\nb:\n  c: " + LONG + "\n", 3, "Exceeds the limit"),
                            ("a: 1\nwhen: 2024-13-45\n", 2, "month must be in 1..12")):
        p = tmp_path / "x.yaml"
        p.write_text(text)
        with pytest.raises(InputError, match=f"cannot parse YAML: {msg}") as e:
            io.read_yaml(p)
        assert e.value.line == line


@pytest.mark.parametrize("fn,field,msg", [
    ({"name": "f", "description": 5}, "tools[2].description", "expected a string or a map language -> text, got int"),
    ({"name": "f", "parameters": "none"}, "tools[2].parameters", "expected a JSON Schema object, got str"),
    ({"name": "f", "parameters": {"properties": [1]}}, "tools[2].parameters.properties", "expected an object of"),
    ({"name": "f", "parameters": {"properties": {}, "required": "x"}}, "tools[2].parameters.required", "a list of"),
    ({"name": "f", "parameters": {"properties": {}, "required": [["x"]]}}, "tools[2].parameters.required", "a list"),
    ({"description": "no name"}, "tools[2].name", "tool has no function name"),
])
def test_a_tool_definition_of_the_wrong_shape_is_located(fn, field, msg):
    for obj, at in ((fn, field), ({"type": "function", "function": fn}, field.replace("]", "].function", 1))):
        with pytest.raises(InputError, match=msg) as e:
            import_openai_tool(obj, where=("rows.jsonl", 4, "tools[2]"))
        assert (e.value.path, e.value.line, e.value.field) == ("rows.jsonl", 4, at)
    assert import_openai_tool({"name": "f", "description": None, "parameters": None})["parameters"] == {
        "type": "object", "properties": {}, "required": []}  # null parts are absent ones


def test_control_characters_are_those_the_router_refuses():
    from toolgate.core.runtime import RouterError, check_request

    for text in ("a\x00b", "ring\x07", "\x1b[A", "x\x85", "lone \ud800"):
        assert io.control_character(text) is not None
        with pytest.raises(RouterError, match="control character"):
            check_request(text, 1000)
    for text in ("tab\there", "two\nlines\r\n", "\ufeffBOM, soft\u00adhyphen, 👩\u200d💻"):
        assert io.control_character(text) is None and check_request(text, 1000)


def test_control_character_is_unicodes_cc_and_cs_over_every_code_point():
    """The regex is Unicode's categories Cc and Cs less tab, newline and carriage return, code point by code point."""
    import unicodedata

    for cp in range(0x110000):
        c = chr(cp)
        want = unicodedata.category(c) in ("Cc", "Cs") and c not in "\t\n\r"
        assert (io.control_character(f"a{c}b") == c) is want, hex(cp)


def test_a_key_given_twice_is_refused_in_json_and_yaml(tmp_path):
    from toolgate.core.io import read_yaml

    p = tmp_path / "c.jsonl"
    p.write_text(json.dumps(tool("a_b")) + '\n{"id": "x", "id": "y"}\n')
    with pytest.raises(InputError, match="duplicate key 'id'") as e:
        load_catalog(p)
    assert e.value.line == 2
    y = tmp_path / "c.yaml"
    y.write_text("experiment: x\nseed: 1\nnested: {a: 1}\nseed: 2\n")
    with pytest.raises(InputError, match="duplicate key 'seed'") as e:
        read_yaml(y)
    assert e.value.line == 4
    y.write_text("a: &base {x: 1}\nb:\n  <<: *base\n  x: 2\n")  # a merge key is not a duplicate, nor what overrides it
    assert read_yaml(y) == {"a": {"x": 1}, "b": {"x": 2}}
    y.write_text("a: &a {p: x, q: 1}\nm1: &m1\n  <<: *a\n  p: lfm2\nother: {m2: {<<: *m1}}\n")  # merged twice
    assert read_yaml(y) == yaml.safe_load(y.read_text())  # as PyYAML reads it, whatever a merge copied


@pytest.mark.parametrize("text,line,field", [
    ('[{"name": "a"},\n {"name": "b",\n  "d": "{\\"name\\": 1, [x]}",\n  "name": "c"}]', 4, "[1].name"),  # braces in a string
    ('{"a": 1,\n "b": {"p": [0, {"z": 1,\n "z": 2}]}}', 3, "b.p[1].z"),
    ('{"a": 1,\n "a": 2, "b": {"x": 1, "x": 2}}', 2, "a"),  # the first in the text, where the decoder meets x first
    ('{"k\\nx": 1,\n "k\\nx": 2, "k\\\\nx": 3}', 2, "k\\nx"),  # escaped: the error stays one line
])
def test_a_duplicate_key_in_a_json_file_is_named_at_its_line_and_field(text, line, field):
    with pytest.raises(InputError) as e:
        io.loads_json(text, "tools.json")
    assert (e.value.line, e.value.field) == (line, field) and "\n" not in str(e.value)
    assert str(e.value).endswith(f"duplicate key '{field.split('.')[-1].split(']')[-1]}' (JSON keeps the last value "
                                 "silently)")


@pytest.mark.parametrize("text,field", [('{"a": "x\\ud800"}', "a"), ('{"b": [1, {"c": "\\udfff"}]}', "b[1].c"),
                                        ('{"k\\ud800": 1}', "k\\ud800")])
def test_a_lone_surrogate_escape_is_refused_where_the_json_is_read(text, field):
    """It decodes to a string no UTF-8 file can hold: writing it later raised UnicodeEncodeError (issue 72)."""
    with pytest.raises(InputError) as e:
        io.loads_json(text, "f.jsonl", 3)
    assert e.value.field == field and e.value.line == 3
    assert io.loads_json('{"a": "\\ud83d\\ude00"}', "f.jsonl") == {"a": "\U0001F600"}  # a pair is one character


def test_a_device_a_fifo_or_an_oversized_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """/dev/zero read until memory ran out and a FIFO blocked for ever (issue 72): one line each, at once."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", fifo):
        with pytest.raises(InputError, match="not a regular file"):
            io.read_text(path)
    big = tmp_path / "big.jsonl"
    big.write_text("x" * 101)
    monkeypatch.setattr(io, "MAX_READ_BYTES", 100)
    with pytest.raises(InputError, match="larger than the limit"):
        io.read_text(big)
    (tmp_path / "ok.jsonl").write_text("x" * 100)
    assert io.read_text(tmp_path / "ok.jsonl") == "x" * 100
