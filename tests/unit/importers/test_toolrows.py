"""toolgate import tool-rows: labelled rows and BFCL-live-shaped rows (fixtures written for the tests), every decision
the importer takes counted in import.json and the printed summary, one-line errors without half-written output,
field flags and label maps, determinism, per-format help; openai-tools under the same rules."""
import json

import pytest

from import_fixtures import EXAMPLE
from tool_rows_fixtures import TOOLS, bfcl_live_rows, labelled_rows, misnamed_rows
from toolgate.cli import build_parser, main
from toolgate.config import load
from toolgate.core import schemas
from toolgate.importers import Destination, Options, import_set
from toolgate.importers.build import NO_TOOLS
from toolgate.importers.toolrows import fields
from toolgate.utterances import load_inputs


def _read(out):
    cfg = load(out / "config.yaml")
    catalog, rows = load_inputs(cfg["catalog"], cfg["utterances"]["file"], tuple(cfg["langs"]))
    return catalog, {r["utterance_id"]: r for r in rows}, json.loads((out / "import.json").read_text()), cfg


def _tool_rows(*args):
    return main(["import", "tool-rows", *map(str, args)])


def test_labelled_rows_keep_their_tools_and_count_every_decision(tmp_path, capsys):
    out = tmp_path / "rows"
    assert _tool_rows(labelled_rows(tmp_path), "--preset", "labelled", "--empty-candidates", "catalog",
                      "--out", out) == 0
    catalog, rows, info, cfg = _read(out)
    outcomes = [r["gold_outcome"] for r in rows.values()]
    assert (outcomes.count("action"), outcomes.count("ask"), outcomes.count("delegate")) == (15, 4, 7)
    assert rows["call-0"]["candidates"] == ["get_weather", "book_table", "play_song"]  # the row's own tools, in order
    assert all(r["gold_tool"] in r["candidates"] for r in rows.values() if r["gold_tool"])
    assert "candidates" not in rows["refuse-empty"] and info["with_candidates"] == 25
    assert [m["content"] for m in rows["call-3"]["context"]] == ["You are a phone assistant.", "Hi there", "Hello!"]
    assert rows["call-5"]["gold_tool"] == "play_song" and "context" not in rows["call-5"]  # call after the request
    assert rows["call-6"]["gold_tool"] == "translate_text"  # through `answers`
    # two definitions named 'search': the second is renamed, and import.json says so
    assert info["renamed_tools"] == {"search_2": "search"} and rows["call-8"]["gold_tool"] == "search_2"
    assert sum(t["kind"] == "action" for t in catalog) == len(TOOLS) == 8  # identical definitions merged
    assert rows["call-0"]["meta"] == {"source": "fixture", "difficulty": "easy"}
    assert info["meta_fields"] == {"difficulty": 15, "source": 26}
    assert rows["ask-0"]["missing_slots"] == ["body"] and rows["ask-2"]["missing_slots"] == ["unknown"]
    assert info["langs"] == {"ko": 5, "en": 21} and cfg["langs"] == ["ko", "en"]
    assert rows["call-10"]["lang"] == "ko" and rows["refuse-5"]["lang"] == "ko"
    d = info["decisions"]
    assert d["ask without slot labels: missing_slots ['unknown']"] == 2
    assert d["label 'call' -> action"] == 15 and d["label 'cannot_answer' -> delegate"] == 7
    assert d["gold call from 'answers'"] == 2 and d["gold call from the assistant message after the request"] == 1
    assert d["offered no tools: sees the whole catalog (--empty-candidates catalog)"] == 1
    assert info["ambiguous_gold"] == 1  # refuse-empty: 'cannot answer' offered nothing, now seeing every tool
    assert d["repeated requests (text, earlier turns and candidates of an earlier row) kept (--duplicates drop drops "
             "them)"] == 1
    assert d["language ko: read from the script"] == 5
    printed = capsys.readouterr().out
    assert all(f"decided: {what}: {n}\n" in printed for what, n in d.items())
    assert "languages: ko=5, en=21 (mixed" in printed and "renamed: 'search' -> search_2" in printed
    assert "kept in meta: difficulty (15 rows), source (26 rows)" in printed


def test_duplicates_dropped_and_empty_lists_delegated(tmp_path):
    opt = Options(duplicates="drop", empty_candidates="delegate", fields=fields("labelled"))
    info = import_set("tool-rows", [labelled_rows(tmp_path)], Destination(tmp_path / "out"), opt)
    _, rows, _, _ = _read(tmp_path / "out")
    assert info["requests"] == 24 and "call-0-again" not in rows and "call-0" in rows
    assert info["decisions"]["repeated requests (text, earlier turns and candidates of an earlier row) dropped"] == 1
    assert info["decisions"]["offered no tools: delegate, seeing no tool (--empty-candidates delegate)"] == 1
    # it sees no tool: utterances.jsonl (candidate lists never empty) leaves it out, counted; nothing is ambiguous
    assert "refuse-empty" not in rows and info["dropped"][NO_TOOLS] == 1 and info["ambiguous_gold"] == 0


def test_bfcl_live_preset(tmp_path):
    out = tmp_path / "live"
    assert _tool_rows(bfcl_live_rows(tmp_path), "--preset", "bfcl-live", "--empty-candidates", "delegate",
                      "--out", out) == 0
    catalog, rows, info, _ = _read(out)
    assert (info["in_catalog"], info["out_of_catalog"]) == (12, 7) and info["dropped"][NO_TOOLS] == 1  # sees none
    assert rows["live_multiple_4-4-0"]["gold_tool"] == "http_get" and rows["live_multiple_5-5-0"]["gold_tool"] == \
        "http_get_2"  # BFCL's dotted names in snake_case; the second definition of http.get renamed
    assert info["renamed_tools"] == {"http_get_2": "http.get"}
    assert [m["content"] for m in rows["live_multiple_2-2-0"]["context"]] == [
        "I have a team lunch on Friday", "Nice! Anything I can do?"]  # BFCL's earlier turns
    assert all(r["subtype"] == "no_call" and r["gold_tool"] is None for k, r in rows.items() if "irrelevance" in k)
    assert info["meta_fields"] == {} and info["decisions"]["gold call from 'ground_truth'"] == 12
    assert info["decisions"]["label 'no_call' -> delegate"] == 8
    assert {t["id"] for t in catalog if t["kind"] == "action"} == {
        "cafe_order_drink", "ride_request", "calendar_add_event", "stocks_quote", "http_get", "http_get_2"}


def test_an_empty_tool_list_is_an_error_unless_the_flag_says_what_it_means(tmp_path, capsys):
    src = bfcl_live_rows(tmp_path)
    assert _tool_rows(src, "--preset", "bfcl-live", "--out", tmp_path / "x") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{src}:20: field 'function': empty candidate list" in err
    assert not (tmp_path / "x").exists()


GOOD = {"label": "call", "tools": [TOOLS["weather"]], "messages": [{"role": "user", "content": "Weather in Rome?"}],
        "tool_calls": [{"function": {"name": "get_weather", "arguments": "{}"}}]}


@pytest.mark.parametrize("row, field, message", [
    ({**GOOD, "label": "maybe"}, "label", "label 'maybe' has no gold outcome"),
    ({**GOOD, "tool_calls": [{"name": "play_song"}]}, "tools", "gold call 'play_song' is not among the row's tools"),
    ({k: v for k, v in GOOD.items() if k != "tool_calls"}, "tool_calls", "no call naming its tool"),
    ({**GOOD, "label": "cannot_answer"}, "tool_calls", "has a call of 'get_weather'"),
    ({k: v for k, v in GOOD.items() if k != "tools"}, "tools", "missing field"),
    ({**GOOD, "tools": [{"description": "no name"}]}, "tools[0]", "not a tool definition"),
    ({**GOOD, "tools": [{"name": "x", "description": ["a"]}]}, "tools[0].description", "expected a string or a map language -> text, got list"),
    ({**GOOD, "tools": [{"type": "function", "function": {"name": "x", "parameters": "{}"}}]},
     "tools[0].function.parameters", "expected a JSON Schema object, got str"),
    ({**GOOD, "tools": [{"name": "x", "parameters": {"properties": "city"}}]}, "tools[0].parameters.properties",
     "expected an object of parameters, got str"),
    ({**GOOD, "tools": [{"name": "x", "parameters": {"required": "city"}}]}, "tools[0].parameters.required",
     "expected a list of parameter names, got str"),
    ({**GOOD, "label": "needs_info", "missing_slots": ["country"]}, "missing_slots", "not a required parameter"),
    ({**GOOD, "tool_calls": [{"arguments": {}}]}, "tool_calls", "not a tool call"),
    ({**GOOD, "tool_calls": "[{"}, "tool_calls", "malformed JSON"),
    ({**GOOD, "messages": [{"role": "assistant", "content": "Hi"}]}, "messages", "no user message"),
    ({**GOOD, "id": "call-0"}, "id", "duplicate id 'call-0'"),
    ({k: v for k, v in GOOD.items() if k != "label"}, "label", "missing label"),
])
def test_bad_row_is_one_line_naming_file_line_field(tmp_path, capsys, row, field, message):
    src = labelled_rows(tmp_path)
    src.write_text(src.read_text() + json.dumps(row) + "\n")
    out = tmp_path / "out"
    assert _tool_rows(src, "--preset", "labelled", "--empty-candidates", "catalog", "--out", out) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{src}:27: field '{field}': " in err and message in err
    assert not out.exists() and not list(tmp_path.glob("out*"))


def _custom(tmp_path):
    weather, song = TOOLS["weather"]["function"], TOOLS["song"]["function"]
    rows = [{"key": f"k{i}", "query": text, "functions": [weather, song], "expected": name, "verdict": verdict}
            for i, (text, name, verdict) in enumerate([
                ("Weather in Paris", "get_weather", "ok"), ("Is it sunny in Rome", "get_weather", "ok"),
                ("Play Yesterday", "play_song", "ok"), ("Play some jazz", "play_song", "ok"),
                ("Tell me about yourself", None, "refuse"), ("You are funny", None, "refuse"),
                ("Play some jazz", None, "refuse"), ("asdf", None, "ignore")])]
    path = tmp_path / "custom.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if v is not None}) + "\n" for r in rows))
    return path


def test_field_flags_and_label_map(tmp_path, capsys):
    src, out = _custom(tmp_path), tmp_path / "custom"
    assert _tool_rows(src, "--text-field", "query", "--tools-field", "functions", "--call-field", "expected",
                      "--label-field", "verdict", "--id-field", "key",
                      "--label-map", "ok=action,refuse=chat,ignore=skip", "--out", out) == 0
    _, rows, info, _ = _read(out)
    assert [r["gold_outcome"] for r in rows.values()] == ["action"] * 4 + ["chat"] * 3 and "k7" not in rows
    assert rows["k2"]["gold_tool"] == "play_song" and rows["k4"]["candidates"] == ["get_weather", "play_song"]
    d = info["decisions"]
    assert d["label 'ignore' -> skip"] == 1 and d["label 'ok' -> action"] == 4
    assert d["repeated requests with another gold outcome or tool than the earlier row"] == 1  # 'Play some jazz' twice
    assert _tool_rows(src, "--label-map", "ok=maybe", "--out", tmp_path / "bad") == 2
    assert "error: --label-map: 'ok=maybe' is not label=outcome" in capsys.readouterr().err


def test_same_input_and_seed_give_byte_identical_files(tmp_path):
    src, opt = labelled_rows(tmp_path), Options(sample=12, empty_candidates="catalog", fields=fields("labelled"))
    for name, o in (("a", opt), ("b", opt), ("c", Options(**{**vars(opt), "seed": 14}))):
        import_set("tool-rows", [src], Destination(tmp_path / name), o)
    same = [(tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in ("catalog.jsonl",
                                                                                             "utterances.jsonl")]
    assert same == [True, True]
    assert (tmp_path / "a" / "utterances.jsonl").read_bytes() != (tmp_path / "c" / "utterances.jsonl").read_bytes()


def test_seed_defaults_to_the_experiments_seed():
    args = build_parser().parse_args(["import", "tool-rows", "rows.jsonl", "--out", "x"])
    assert args.seed == Options().seed == schemas.schema("config")["properties"]["seed"]["default"] == 13


def test_each_format_has_its_own_help(capsys):
    helps = {}
    for fmt in ("tool-rows", "bfcl"):
        with pytest.raises(SystemExit) as done:
            main(["import", fmt, "--help"])
        assert done.value.code == 0
        helps[fmt] = capsys.readouterr().out
    assert all(flag in helps["tool-rows"] for flag in ("--label-map", "--preset", "--text-field", "--call-field",
                                                       "bfcl-live", "labelled", "missing_slots", "tool_calls"))
    assert "--label-map" not in helps["bfcl"] and "possible_answer" in helps["bfcl"]


def test_openai_tools_under_the_same_rules(tmp_path, capsys):
    extra = [{"text": "거실 불 켜 줘", "tool": "turn_on_lights", "source": "ko-test"},
             {"text": "Water the garden", "tool": "water_garden", "candidates": []}]
    requests = tmp_path / "requests.jsonl"
    requests.write_text((EXAMPLE / "requests.jsonl").read_text() + "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                                                           for r in extra))
    args = ["import", "openai-tools", str(EXAMPLE / "tools.json"), str(requests), "--out"]
    assert main([*args, str(tmp_path / "x")]) == 2
    assert f"{requests}:65: field 'candidates': empty candidate list" in capsys.readouterr().err
    assert main([*args, str(tmp_path / "y"), "--empty-candidates", "catalog"]) == 0
    _, rows, info, cfg = _read(tmp_path / "y")
    assert rows["r00064"]["lang"] == "ko" and rows["r00064"]["meta"] == {"source": "ko-test"}
    assert info["langs"] == {"ko": 1, "en": 64} and cfg["langs"] == ["ko", "en"]
    assert info["meta_fields"] == {"source": 1}
    assert "candidates" not in rows["r00065"] and rows["r00065"]["gold_tool"] == "water_garden"


def test_every_misnamed_field_in_one_report_with_the_flags_that_fit(tmp_path, capsys):
    src = misnamed_rows(tmp_path)
    assert _tool_rows(src, "--preset", "labelled", "--empty-candidates", "delegate", "--out", tmp_path / "x") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {src}: 7 problems: " in err
    for text in ("--text-field 'messages' missing in 26 of 26 rows (first: line 1): --text-field conversation?",
                 "--tools-field 'tools' missing in 26 of 26 rows", "--label-field 'label' missing in 26 of 26 rows",
                 "no call field (tool_calls, answers): --call-field expected_call?",
                 "no slots field (missing_slots): --slots-field missing_params?", "no id field (id): --id-field uid?",
                 "label 'unclear' (2 rows, first: line 24) has no gold outcome"):
        assert text in err
    flags = err.split("; try ", 1)[1].split()
    assert flags == ["--text-field", "conversation", "--tools-field", "functions", "--label-field", "category",
                     "--call-field", "expected_call", "--slots-field", "missing_params", "--id-field", "uid",
                     "--label-map", "unclear=action|ask|delegate|chat|skip"]
    # the suggested flags read the file (the label map named)
    assert _tool_rows(src, "--preset", "labelled", "--empty-candidates", "delegate", *flags[:-1], "unclear=skip",
                      "--out", tmp_path / "ok") == 0
    info = json.loads((tmp_path / "ok" / "import.json").read_text())
    assert info["requests"] == 23 and info["meta_fields"] == {"difficulty": 15, "source": 24}


def test_rows_in_another_script_are_skipped_counted_kept_or_refused_and_forcing_is_counted(tmp_path, capsys):
    src = labelled_rows(tmp_path)
    others = [{**GOOD, "id": "ja", "messages": [{"role": "user", "content": "ローマの天気は？iPhoneで"}]},
              {**GOOD, "id": "time", "messages": [{"role": "user", "content": "12:30 ?!"}]}]
    src.write_text(src.read_text() + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in others))
    reading = ["--preset", "labelled", "--empty-candidates", "catalog"]
    assert _tool_rows(src, *reading, "--out", tmp_path / "skip") == 0
    _, rows, info, _ = _read(tmp_path / "skip")
    assert "ja" not in rows and info["requests"] == 26
    skipped = "rows in neither Hangul nor Latin script: left out (--other-langs skip)"
    assert info["decisions"][skipped] == 2 and f"decided: {skipped}: 2" in capsys.readouterr().out
    assert _tool_rows(src, *reading, "--other-langs", "keep", "--out", tmp_path / "keep") == 0
    _, rows, info, _ = _read(tmp_path / "keep")
    assert rows["ja"]["lang"] == rows["time"]["lang"] == "en" and info["requests"] == 28
    capsys.readouterr()
    assert _tool_rows(src, *reading, "--other-langs", "error", "--out", tmp_path / "error") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 3 and "2 problems" in err  # both rows in one run
    assert all(f"{src}:{n}: field 'messages': the text's script is neither Hangul" in err for n in (27, 28))
    assert _tool_rows(src, *reading, "--lang", "en", "--out", tmp_path / "en") == 0
    d = json.loads((tmp_path / "en" / "import.json").read_text())["decisions"]
    assert d["language en: forced by --lang"] == 28
    assert d["language en: forced by --lang over a row whose script reads ko"] == 5
    assert d["language en: forced by --lang over a row whose script reads neither ko nor en"] == 2
