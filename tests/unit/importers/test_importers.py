"""toolgate import: each format on a small fixture (BFCL and FunctionChat also on ../shared/external), the
options (sample, tool split, pooled candidates, routes, language) and one-line errors without half-written output."""
import json
from pathlib import Path

import pytest
import yaml

from conftest import write_jsonl
from import_fixtures import EXAMPLE, beir_folder, bfcl_folder, functionchat_folder
from toolgate.cli import main
from toolgate.config import load
from toolgate.core.catalog import mutating_known
from toolgate.core.errors import InputError
from toolgate.importers import Destination, Options, import_set
from toolgate.importers.build import source_licences
from toolgate.utterances import load_inputs


def _read(out):
    catalog, rows = load_inputs(out / "catalog.jsonl", out / "utterances.jsonl", tuple(load(out / "config.yaml")["langs"]))
    return catalog, rows, json.loads((out / "import.json").read_text())


def test_openai_tools_example_writes_a_ready_experiment(tmp_path, capsys):
    out = tmp_path / "my run"
    assert main(["import", "openai-tools", str(EXAMPLE / "tools.json"), str(EXAMPLE / "requests.jsonl"),
                 "--out", str(out)]) == 0
    catalog, rows, info = _read(out)
    cfg = load(out / "config.yaml")
    assert cfg["experiment"] == "my_run" and cfg["langs"] == ["en"] and cfg["ablation"]["ks"] == "auto"
    assert not cfg["external"]["enabled"] and not cfg["quantization"]["enabled"] and not cfg["native"]["enabled"]
    assert [t["id"] for t in catalog if t["kind"] == "route"] == ["chat", "delegate", "clarify"]
    assert sum(t["kind"] == "action" for t in catalog) == 12 and not mutating_known(catalog)
    outcomes = [r["gold_outcome"] for r in rows]
    assert outcomes.count("action") == 48 and outcomes.count("ask") == 1 and outcomes.count("chat") == 3
    assert {r["slice"] for r in rows} == {"in", "out"} and not any("candidates" in r for r in rows)
    assert info["in_catalog"] == 49 and info["out_of_catalog"] == 14
    printed = capsys.readouterr()
    assert "snakemake --configfile" in printed.out and "no mutating flags" in printed.out


def test_bfcl_fixture_keeps_each_rows_candidates(tmp_path):
    out = tmp_path / "bfcl_run"
    import_set("bfcl", [bfcl_folder(tmp_path)], Destination(out), Options())
    catalog, rows, info = _read(out)
    assert info["in_catalog"] == 6 and info["out_of_catalog"] == 6 and info["with_candidates"] == 12
    assert all(r["gold_tool"] in r["candidates"] for r in rows if r["gold_tool"])
    assert [len(r["candidates"]) for r in rows] == [3] * 6 + [1] * 6
    assert "math_gcd" in {t["id"] for t in catalog}  # BFCL's dotted names as snake_case ids
    assert load(out / "config.yaml")["gate"]["folds"] == 5


def test_functionchat_fixture_keeps_call_and_reject_of_one_request(tmp_path):
    out = tmp_path / "fc"
    import_set("functionchat", [functionchat_folder(tmp_path)], Destination(out), Options())
    catalog, rows, _ = _read(out)
    call = {r["pair_id"]: r for r in rows if r["subtype"] == "call"}
    reject = [r for r in rows if r["subtype"] == "reject"]
    assert len(call) == len(reject) == 6
    for r in reject:  # the cannot-answer request stays unanswerable: its tool is not among its candidates
        twin = call[r["pair_id"]]
        assert r["gold_tool"] is None and twin["gold_tool"] not in r["candidates"]
        assert twin["gold_tool"] in {t["id"] for t in catalog}  # ... although the catalog holds it


def test_pooling_drops_cannot_answer_rows_that_only_their_list_made(tmp_path):
    out = tmp_path / "fc_pooled"
    info = import_set("functionchat", [functionchat_folder(tmp_path)], Destination(out), Options(candidates=False, holdout=0.5))
    _, rows, _ = _read(out)
    assert info["dropped"] == {"out of catalog only within its own list (pooled)": 6}
    assert not any("candidates" in r for r in rows)
    assert {r["subtype"] for r in rows if r["gold_tool"] is None} == {"holdout:call"}


def test_beir_gold_is_the_highest_scored_tool(tmp_path):
    out = tmp_path / "beir_run"
    import_set("beir", [beir_folder(tmp_path)], Destination(out), Options(holdout=0.5, seed=3))
    catalog, rows, info = _read(out)
    by_id = {r["utterance_id"]: r for r in rows}
    assert info["requests"] == 8 and "q-q8" not in by_id  # the unjudged query is left out
    # d1 (timer) scored 2 beats d0 (alarm) scored 1: q0 and q1 share their gold tool and its fate in the split
    assert by_id["q-q0"]["gold_tool"] == by_id["q-q1"]["gold_tool"] in ("timer", None)
    assert info["removed_tools"] == 3  # int(0.5 x 7 distinct gold tools)
    assert sum(t["kind"] == "action" for t in catalog) == 8 - 3  # one pooled catalog, minus the removed tools
    assert {r["subtype"] for r in rows if r["gold_tool"] is None} == {"holdout:query"}
    assert info["out_of_catalog"] == sum(r["gold_tool"] is None for r in rows) >= 3
    assert load(out / "config.yaml")["gate"]["folds"] == info["out_of_catalog"] < 5  # fewer groups than the default


def test_a_beir_passage_longer_than_a_description_is_cut_and_counted(tmp_path):
    folder = beir_folder(tmp_path)
    rows = [json.loads(line) for line in (folder / "corpus.jsonl").read_text().splitlines()]
    rows[2]["text"] = "Forecast of the sky. " * 300  # 6,300 characters
    rows[3]["title"] = "Music " + "of the spheres " * 20  # 306 characters: its id is cut too
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    info = import_set("beir", [folder], Destination(tmp_path / "out"), Options(holdout=0.5, seed=3))
    catalog = _read(tmp_path / "out")[0]
    assert info["decisions"]["corpus texts cut to the catalog's limit of 4000 characters"] == 1
    assert info["decisions"]["corpus titles cut to the catalog's limit of 200 characters"] == 1
    assert max(len(d) for t in catalog for d in t["descriptions"].values()) == 4000
    assert max(len(t["id"]) for t in catalog) <= 120


@pytest.mark.parametrize("fmt,folder,name,field", [
    ("bfcl", bfcl_folder, "BFCL_v4_multiple.json", "id"),
    ("functionchat", functionchat_folder, "FunctionChat-CallDecision.jsonl", "serial_num"),
    ("beir", beir_folder, "queries.jsonl", "_id"),
])
def test_a_request_id_given_twice_is_named_in_its_source(tmp_path, fmt, folder, name, field):
    src = folder(tmp_path)
    path = next(src.rglob(name))
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + lines[:1]) + "\n")  # the first record again, as the last line
    with pytest.raises(InputError) as e:
        import_set(fmt, [src], Destination(tmp_path / "out"), Options(holdout=0.5, seed=3))
    assert (Path(e.value.path).name, e.value.line, e.value.field) == (name, len(lines) + 1, field)
    assert "given twice (first on line 1)" in e.value.message and not (tmp_path / "out").exists()


def test_sample_and_seed(tmp_path):
    a = import_set("bfcl", [bfcl_folder(tmp_path)], Destination(tmp_path / "a"), Options(sample=8, seed=1))
    b = import_set("bfcl", [bfcl_folder(tmp_path)], Destination(tmp_path / "b"), Options(sample=8, seed=1))
    assert a["requests"] == b["requests"] == 8 and (tmp_path / "a" / "utterances.jsonl").read_text() == (
        tmp_path / "b" / "utterances.jsonl").read_text()
    used = {c for r in _read(tmp_path / "a")[1] for c in r["candidates"]}
    assert used == {t["id"] for t in _read(tmp_path / "a")[0] if t["kind"] == "action"}  # catalog = kept lists


def test_no_routes_and_language(tmp_path):
    out = tmp_path / "ko"
    import_set("openai-tools", [EXAMPLE / "tools.json", EXAMPLE / "requests.jsonl"], Destination(out), Options(routes=False), "ko")
    catalog, rows, _ = _read(out)
    assert not any(t["kind"] == "route" for t in catalog) and {r["lang"] for r in rows} == {"ko"}
    assert catalog[0]["descriptions"] == {"ko": "Set the target temperature of the home thermostat."}


@pytest.mark.parametrize("line, field", [
    ({"text": "hi", "tool": "nope"}, "tool"),
    ({"text": "hi", "tool": {"name": "set_timer"}}, "tool"),  # an object: a TypeError (unhashable) before issue 72
    ({"text": "hi", "tool": "set_timer", "candidates": ["open_garage"]}, "candidates"),
    ({"text": " ", "tool": None}, "text"),
    ({"text": "hi", "tool": "set_timer", "missing_slots": ["room"]}, "missing_slots"),
    ({"txt": "hi", "tool": None}, "text"),  # an unknown field goes to meta; the request still needs its text
])
def test_bad_request_is_one_line_naming_file_line_field(tmp_path, capsys, line, field):
    requests = tmp_path / "requests.jsonl"
    requests.write_text((EXAMPLE / "requests.jsonl").read_text() + json.dumps(line) + "\n")
    out = tmp_path / "out"
    assert main(["import", "openai-tools", str(EXAMPLE / "tools.json"), str(requests), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == err.splitlines()[0] and f"{requests}:64: field '{field}'" in err
    assert not out.exists() and not (tmp_path / "out.partial").exists()


def test_errors_before_any_output(tmp_path, capsys):
    folder = bfcl_folder(tmp_path)
    assert main(["import", "bfcl", str(folder), "--out", str(tmp_path / "x"), "--lang", "ko"]) == 2
    assert "bfcl is in 'en'" in capsys.readouterr().err
    assert main(["import", "bfcl", str(folder), "--out", str(tmp_path / "x"), "--subsets", "multiple"]) == 2
    assert "out-of-catalog request groups" in capsys.readouterr().err  # no out-of-catalog request left
    (folder / "BFCL_v4_multiple.json").write_text('{"id": "multiple_0", "function": [{"name": "f"}]}\n')
    assert main(["import", "bfcl", str(folder), "--out", str(tmp_path / "x")]) == 2
    assert "BFCL_v4_multiple.json:1: field 'question': missing field" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    with pytest.raises(SystemExit):
        main(["import", "beir", str(folder), "--out", str(tmp_path / "x"), "--holdout-tools", "1.5"])


def test_bfcl_on_the_mirror(mirror, tmp_path):
    out = tmp_path / "bfcl_mirror"
    info = import_set("bfcl", [mirror / "bfcl"], Destination(out), Options(sample=40, seed=2))
    catalog, rows, _ = _read(out)
    assert info["requests"] == 40 and info["with_candidates"] == 40 and info["in_catalog"] and info["out_of_catalog"]
    assert {r["subtype"] for r in rows} <= {"multiple", "live_multiple", "irrelevance", "live_irrelevance"}
    written = yaml.safe_load((out / "config.yaml").read_text())
    assert written["catalog"] == "catalog.jsonl" and written["relative_to"] == "config"  # relative to the file


def test_functionchat_on_the_mirror(mirror, tmp_path):
    out = tmp_path / "fc_mirror"
    info = import_set("functionchat", [mirror / "functionchat" / "FunctionChat-CallDecision.jsonl"], Destination(out), Options())
    _, rows, _ = _read(out)
    assert info["in_catalog"] == info["out_of_catalog"] == 100 and info["with_candidates"] == 200
    assert len({r["pair_id"] for r in rows}) == 100  # a REJECT row shares its CALL twin's pair
    single = import_set("functionchat", [mirror / "functionchat"], Destination(tmp_path / "fc_all"), Options(subsets=("4_close", "call", "reject")))
    assert single["requests"] == 300


LONG = "7" * 5000  # past Python's 4,300-digit limit of int()


def test_an_integer_too_long_or_a_tool_of_the_wrong_shape_is_one_line(tmp_path, capsys):
    tools = json.loads((EXAMPLE / "tools.json").read_text())
    requests = EXAMPLE / "requests.jsonl"
    for i, (change, field, message) in enumerate((
            (lambda t: t.update(description=7), "[1].function.description",
             "expected a string or a map language -> text, got int"),
            (lambda t: t.update(parameters=[]), "[1].function.parameters", "expected a JSON Schema object, got list"),
            (lambda t: t["parameters"].update(properties=["celsius"]), "[1].function.parameters.properties",
             "expected an object of parameters, got list"),
            (lambda t: t["parameters"].update(required="celsius"), "[1].function.parameters.required",
             "expected a list of parameter names, got str"))):
        bad = json.loads(json.dumps(tools))
        change(bad[1]["function"])
        path = tmp_path / f"tools{i}.json"
        path.write_text(json.dumps(bad))
        assert main(["import", "openai-tools", str(path), str(requests), "--out", str(tmp_path / "x")]) == 2
        assert capsys.readouterr().err == f"error: {path}: field '{field}': {message}\n"
    path = tmp_path / "long.json"
    path.write_text((EXAMPLE / "tools.json").read_text().replace('"celsius": {', '"celsius": {"n": ' + LONG + ",", 1))
    assert main(["import", "openai-tools", str(path), str(requests), "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {path}:10: field '[0].function.parameters.properties."
                                              "celsius.n': integer of 5000 digits; at most 4300 are read\n")
    long_requests = tmp_path / "requests.jsonl"
    long_requests.write_text(requests.read_text() + '{"text": "hi", "tool": null, "n": ' + LONG + "}\n")
    assert main(["import", "openai-tools", str(EXAMPLE / "tools.json"), str(long_requests), "--out",
                 str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {long_requests}:64: field 'n': integer of 5000 digits")
    assert not (tmp_path / "x").exists()


def test_bfcl_and_functionchat_rows_of_the_wrong_shape_are_one_line(tmp_path, capsys):
    def rewrite(path, lineno, change):
        lines = path.read_text(encoding="utf-8").splitlines()
        obj = json.loads(lines[lineno - 1])
        change(obj)
        lines[lineno - 1] = json.dumps(obj, ensure_ascii=False)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    bfcl = bfcl_folder(tmp_path)
    rewrite(bfcl / "BFCL_v4_multiple.json", 3, lambda r: r["function"][1]["parameters"].update(properties="x"))
    assert main(["import", "bfcl", str(bfcl), "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err == (f"error: {bfcl / 'BFCL_v4_multiple.json'}:3: field 'function[1].parameters."
                                       "properties': expected an object of parameters, got str\n")
    fc = functionchat_folder(tmp_path)
    calls = fc / "FunctionChat-CallDecision.jsonl"
    for lineno in (2, 8):  # a CALL row and a REJECT row without their conversation
        rewrite(calls, lineno, lambda r: r.pop("input_messages"))
        assert main(["import", "functionchat", str(fc), "--out", str(tmp_path / "x")]) == 2
        assert capsys.readouterr().err == f"error: {calls}:{lineno}: field 'input_messages': missing field\n"
        functionchat_folder(tmp_path)
    assert not (tmp_path / "x").exists()


def test_requests_the_router_would_refuse_are_dropped_and_counted(tmp_path, capsys):
    from toolgate.core.runtime import RouterError, check_request
    from toolgate.importers.build import REFUSED

    extra = [{"text": "Turn on the lights\x00", "tool": "turn_on_lights"}, {"text": "Ring\x07 the bell", "tool": None},
             {"text": "Turn on\tthe lights", "tool": "turn_on_lights"}]  # a tab the router accepts
    requests = tmp_path / "requests.jsonl"
    requests.write_text((EXAMPLE / "requests.jsonl").read_text() + "".join(json.dumps(r) + "\n" for r in extra))
    out = tmp_path / "out"
    assert main(["import", "openai-tools", str(EXAMPLE / "tools.json"), str(requests), "--out", str(out)]) == 0
    _, rows, info = _read(out)
    assert len(rows) == 64 and rows[-1]["text"] == "Turn on\tthe lights"
    assert info["dropped"] == {REFUSED.format("r00064"): 2}
    assert f"dropped 2 requests: {REFUSED.format('r00064')}" in capsys.readouterr().out
    for r in rows:  # what is kept, the router accepts
        check_request(r["text"], 10**6)
    for r in extra[:2]:
        with pytest.raises(RouterError, match="control character"):
            check_request(r["text"], 10**6)


def test_requests_read_over_a_catalog_are_the_imported_rows(tmp_path):
    # decide --eval's reading (read_over) is import's: over the imported catalog the rows are the written ones
    from toolgate.importers import read_over

    for fmt, src, opt in [("bfcl", [bfcl_folder(tmp_path)], Options()),
                          ("openai-tools", [EXAMPLE / "tools.json", EXAMPLE / "requests.jsonl"], Options())]:
        out = tmp_path / f"{fmt}_run"
        import_set(fmt, src, Destination(out), opt)
        catalog, rows, _ = _read(out)
        assert read_over(fmt, src, catalog, Options(routes=False))[0] == rows
    # a tool the catalog lacks is split off as --holdout-tools splits: its requests out of catalog, its entries gone
    catalog, rows, _ = _read(tmp_path / "bfcl_run")
    over, info = read_over("bfcl", [bfcl_folder(tmp_path)], [t for t in catalog if t["id"] != "math_gcd"],
                           Options(routes=False))
    assert info["removed_tools"] == 1 and not any("math_gcd" in r["candidates"] for r in over)
    gcd = [r["utterance_id"] for r in rows if r["gold_tool"] == "math_gcd"]
    assert gcd and all(r["gold_tool"] is None and r["subtype"] == "holdout:multiple" for r in over
                       if r["utterance_id"] in gcd)
    # matched by definition, not by id: a renamed id still finds its tool
    renamed = [{**t, "id": f"x_{t['id']}"} if t["kind"] == "action" else t for t in catalog]
    assert {r["gold_tool"] for r in read_over("bfcl", [bfcl_folder(tmp_path)], renamed, Options(routes=False))[0]
            if r["gold_tool"]} == {f"x_{r['gold_tool']}" for r in rows if r["gold_tool"]}


def test_requests_in_a_language_the_tools_lack_are_warned_about(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": n, "description": f"{n} in English"} for n in ("get_weather", "play_song")]))
    requests = write_jsonl(tmp_path / "requests.jsonl", [
        {"text": "weather in Oslo", "tool": "get_weather"}, {"text": "서울 날씨", "tool": "get_weather"},
        {"text": "노래 틀어 줘", "tool": "play_song"}, {"text": "택시 불러 줘", "tool": None},
        {"text": "order a pizza", "tool": None}])
    assert main(["import", "openai-tools", str(tools), str(requests), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    warning = ("warning: 3 of 5 requests are in ko, but only 0 of the catalog's 2 actions have a ko name or "
               "description: the lexical ranker (bm25) matches words, so it will likely miss most ko requests; the "
               "multilingual encoders (e5, usem3) rank across languages")
    assert warning in out and out.count("warning:") == 1  # English is covered
    assert _read(tmp_path / "out")[2]["language_warnings"] == [warning.removeprefix("warning: ") + " (or give each "
                                                                "tool a ko name and description)"]


def test_import_records_the_licence_beside_its_sources(tmp_path):
    """A LICENSE beside the source files, or inside a source folder: its SPDX line, Apache-2.0 by its title, else its
    first line; import.json lists each (none beside: an empty list)."""
    folder = bfcl_folder(tmp_path)
    (folder / "LICENSE").write_text("\n                                 Apache License\n"
                                    "                           Version 2.0, January 2004\n")
    import_set("bfcl", [folder], Destination(tmp_path / "bfcl_run", "toolgate import bfcl"), Options())  # the real path
    assert _read(tmp_path / "bfcl_run")[2]["licenses"] == [{"name": "Apache-2.0", "file": str(folder / "LICENSE")}]
    (tmp_path / "LICENSE.txt").write_text("# SPDX-License-Identifier: CC-BY-4.0\n")  # beside a source file
    (tmp_path / "own" / "COPYING").parent.mkdir()
    (tmp_path / "own" / "COPYING").write_text("\nOur own terms, v2\nmore\n")
    assert [x["name"] for x in source_licences([tmp_path / "r.jsonl", tmp_path / "own", EXAMPLE])] == \
        ["CC-BY-4.0", "Our own terms, v2"]
    for title, spdx in (("Creative Commons Legal Code\n\nAttribution 3.0 Unported\n", "CC-BY-3.0"),  # CLINC150's
                        ("Attribution-NonCommercial-ShareAlike 4.0 International\n", "CC-BY-NC-SA-4.0"),
                        ("\ufeff# Attribution 4.0 International\n", "CC-BY-4.0"),
                        ("Creative Commons Legal Code\n\nCC0 1.0 Universal\n", "CC0-1.0"),
                        ("Creative Commons Legal Code\n\nAttribution 3.0 Germany\n", "Attribution 3.0 Germany"),
                        ("MIT License\n\nAttribution 4.0\n", "MIT License")):  # a title on its first line only
        (tmp_path / "own" / "COPYING").write_text(title)
        assert source_licences([tmp_path / "own"])[0]["name"] == spdx


def test_openai_tools_keep_their_examples_and_negatives(tmp_path):
    tools = [{"type": "function", "function": {"name": "play_song", "description": "Play a song",
                                               "examples": ["play some jazz", "노래 틀어 줘"],
                                               "negatives": ["what song is this?"]}},
             {"name": "next_track", "description": "Skip to the next track"}]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    write_jsonl(tmp_path / "requests.jsonl", [{"text": "jazz please", "tool": "play_song"},
                                              {"text": "재즈 틀어 줘", "tool": "play_song"},
                                              {"text": "skip it", "tool": "next_track"},
                                              {"text": "weather in Busan", "tool": None},
                                              {"text": "tell me a joke", "tool": None}])
    import_set("openai-tools", [tmp_path / "tools.json", tmp_path / "requests.jsonl"], Destination(tmp_path / "out"),
               Options())
    catalog, _, _ = _read(tmp_path / "out")
    song = next(t for t in catalog if t["id"] == "play_song")
    assert song["examples"] == [{"text": "play some jazz", "lang": "en"}, {"text": "노래 틀어 줘", "lang": "ko"}]
    assert song["negatives"] == [{"text": "what song is this?", "lang": "en"}]
    assert "examples" not in next(t for t in catalog if t["id"] == "next_track")


def test_korean_named_tools_are_listed_by_their_digest_ids(tmp_path):
    tools = [{"name": "음악_재생", "description": "음악을 재생한다"}, {"name": "다음_곡", "description": "다음 곡으로 넘긴다"}]
    (tmp_path / "tools.json").write_text(json.dumps(tools, ensure_ascii=False))
    write_jsonl(tmp_path / "requests.jsonl", [{"text": "노래 틀어 줘", "tool": "음악_재생"}, {"text": "다음 곡", "tool": "다음_곡"},
                                              {"text": "부산 날씨 어때", "tool": None}, {"text": "농담해 줘", "tool": None}])
    info = import_set("openai-tools", [tmp_path / "tools.json", tmp_path / "requests.jsonl"],
                      Destination(tmp_path / "out"), Options())
    catalog, rows, _ = _read(tmp_path / "out")
    assert info["digest_ids"] == {t["id"]: n for t, n in zip(catalog, ("음악_재생", "다음_곡"))}
    assert catalog[0]["names"] == {"ko": "음악 재생"} and rows[0]["gold_tool"] == catalog[0]["id"]
    assert any(k.startswith("tools whose name has no Latin letter") and v == 2 for k, v in info["decisions"].items())


@pytest.mark.parametrize("tool, field", [
    ({"name": "a", "description": "x", "examples": ["ok", {"text": " ", "lang": "en"}]}, "[0].examples[1]"),
    ({"name": "a", "description": "x", "examples": [{"text": "hi", "lang": "fr"}]}, "[0].examples[0]"),
    ({"name": "a", "description": "x", "negatives": "no"}, "[0].negatives"),
    ({"name": "a", "description": "x", "parameters": {"type": "object", "properties": {"celsius": "number"}}},
     "[0].parameters.properties.celsius"),
    ({"name": "a", "description": "x", "parameters": {"type": "object", "properties": {
        "c": {"type": "number", "description": ["x"]}}}}, "[0].parameters.properties.c.description"),
])
def test_openai_tools_with_a_bad_example_or_parameter_name_it(tmp_path, tool, field):
    (tmp_path / "tools.json").write_text(json.dumps([tool]))
    write_jsonl(tmp_path / "requests.jsonl", [{"text": "x", "tool": "a"}])
    with pytest.raises(InputError) as e:
        import_set("openai-tools", [tmp_path / "tools.json", tmp_path / "requests.jsonl"],
                   Destination(tmp_path / "out"), Options())
    assert e.value.field == field and not (tmp_path / "out").exists()


def test_an_import_with_no_request_left_says_why(tmp_path):
    (tmp_path / "tools.json").write_text(json.dumps([{"name": "a", "description": "x"}]))
    write_jsonl(tmp_path / "requests.jsonl", [{"text": "Привет мир", "tool": "a"}, {"text": "Как дела", "tool": None}])
    with pytest.raises(InputError, match=r"no request left \(rows in neither Hangul nor Latin script: "
                                         r"left out \(--other-langs skip\): 2\)"):
        import_set("openai-tools", [tmp_path / "tools.json", tmp_path / "requests.jsonl"],
                   Destination(tmp_path / "out"), Options())
    assert not (tmp_path / "out").exists()


def test_a_request_id_given_twice_is_named_in_the_requests_file(tmp_path):
    (tmp_path / "tools.json").write_text(json.dumps([{"name": "a", "description": "x"}]))
    write_jsonl(tmp_path / "requests.jsonl", [{"id": "q1", "text": "do a", "tool": "a"},
                                              {"id": "q1", "text": "do a again", "tool": "a"}])
    with pytest.raises(InputError, match=r"duplicate id 'q1' \(first on line 1\)") as e:
        import_set("openai-tools", [tmp_path / "tools.json", tmp_path / "requests.jsonl"],
                   Destination(tmp_path / "out"), Options())
    assert (e.value.path, e.value.line, e.value.field) == (str(tmp_path / "requests.jsonl"), 2, "id")
