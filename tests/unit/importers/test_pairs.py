"""toolgate import pairs: (request, tool) rows in CSV or JSONL beside a tools file (fixtures written for the tests):
columns found or named, duplicates and second tools counted, held-out tools, balanced sampling, one-pass column
errors, and decide --eval on the same files."""
import json

from import_fixtures import NO_TOOL, PAIR_TOOLS, pairs_files
from toolgate.cli import main
from toolgate.core import io
from toolgate.importers import Destination, Options, import_set
from toolgate.importers.pairs import Columns


def _rows(out):
    return {r["utterance_id"]: r for _, r in io.read_jsonl(out / "utterances.jsonl")}


def test_pairs_import_counts_every_decision(tmp_path, capsys):
    tools, pairs = pairs_files(tmp_path, "map")
    out = tmp_path / "run"
    assert main(["import", "pairs", str(tools), str(pairs), "--out", str(out)]) == 0
    info, rows = json.loads((out / "import.json").read_text()), _rows(out)
    assert (info["requests"], info["in_catalog"], info["out_of_catalog"]) == (28, 24, 4)
    assert info["actions"] == len(PAIR_TOOLS) and info["with_candidates"] == 0  # one pooled catalog
    d = info["decisions"]
    assert d["text column: 'query' (--text-column names another)"] == 1 and d["tool column: 'api' (--tool-column "
                                                                              "names another)"] == 1
    assert d["repeated (request, tool) pairs: read once"] == 1
    assert d["requests with another tool on a later row: the first row's tool is the gold one"] == 1
    assert d["tools file read as a name -> description map"] == 1
    by_text = {r["text"]: r for r in rows.values()}
    assert by_text["start a ten minute timer"]["gold_tool"] == "timer_start"
    assert all(by_text[t]["gold_outcome"] == "delegate" for t in NO_TOOL)
    assert info["meta_fields"] == {"source": 28}
    assert "decided: repeated (request, tool) pairs: read once: 1" in capsys.readouterr().out


def test_pairs_held_out_tools_and_balanced_sample(tmp_path):
    tools, pairs = pairs_files(tmp_path)
    opt = Options(holdout=0.25, per_tool=2, sample=16, seed=3, fields=Columns(text="query", tool="api"))
    info = import_set("pairs", [tools, pairs], Destination(tmp_path / "out"), opt)
    rows = list(_rows(tmp_path / "out").values())
    assert info["requests"] == 16 and info["removed_tools"] == 2 and info["actions"] == 6
    assert info["decisions"]["requests over --per-tool 2 left out"] == 8
    per_tool = {}
    for r in rows:
        tool = r["gold_tool"] or r["subtype"]
        per_tool[tool] = per_tool.get(tool, 0) + 1
    assert all(n <= 2 for t, n in per_tool.items() if t in PAIR_TOOLS)
    assert any(r["subtype"] == "holdout:pair" and r["gold_outcome"] == "delegate" for r in rows)


def test_pairs_jsonl_rows_and_every_missing_column_in_one_error(tmp_path, capsys):
    tools, _ = pairs_files(tmp_path)
    src = tmp_path / "pairs.jsonl"
    src.write_text("".join(json.dumps({"utterance": t, "fn": "alarm_set"}) + "\n" for t in ("a", "b")))
    assert main(["import", "pairs", str(tools), str(src), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no tool column (looked for tool, tool_name" in err
    assert "--tool-column NAME names it" in err and "(columns: utterance (2 rows), fn (2 rows))" in err
    assert main(["import", "pairs", str(tools), str(src), "--tool-column", "fn", "--text-column", "q",
                 "--out", str(tmp_path / "x")]) == 2
    assert "no text column 'q': --text-column NAME names it" in capsys.readouterr().err
    src.write_text(json.dumps({"utterance": "a", "fn": "nope"}) + "\n")
    assert main(["import", "pairs", str(tools), str(src), "--tool-column", "fn", "--out", str(tmp_path / "x")]) == 2
    assert "1 rows name 1 tools the tools file does not have (first: 'nope')" in capsys.readouterr().err


def test_a_tools_file_in_json_lines_is_read_and_a_bad_one_names_the_shapes(tmp_path, capsys):
    tools, pairs = pairs_files(tmp_path)
    lines = tmp_path / "tools.jsonl"
    lines.write_text("".join(json.dumps(t) + "\n" for t in json.loads(tools.read_text())))
    info = import_set("pairs", [lines, pairs], Destination(tmp_path / "out"), Options())
    assert info["decisions"]["tools file read as JSON Lines"] == 1
    lines.write_text('{"name": "a"}\nnot json\n')
    assert main(["import", "pairs", str(lines), str(pairs), "--out", str(tmp_path / "y")]) == 2
    assert "expected a JSON list of tool objects" in capsys.readouterr().err


def test_decide_eval_reads_pairs(tmp_path, capsys):
    from router_fixtures import make_artifact

    router = make_artifact(tmp_path, real_gate=False)
    tools, pairs = pairs_files(tmp_path / "src")
    assert main(["decide", "--router", str(router), "--eval", str(tools), str(pairs), "--eval-format", "pairs",
                 "--text-column", "query", "--json"]) == 2  # none of the router's tools: refused, not scored
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "none of the files' 8 tools is in the router's catalog" in err
    assert main(["decide", "--router", str(router), "--eval", str(tools), str(pairs), "--text-column", "q"]) == 2
    assert "--text-column: applies to the files of an import format" in capsys.readouterr().err


def test_parameter_types_outside_json_schema_are_warnings_with_counts(tmp_path, capsys):
    tools, pairs = pairs_files(tmp_path)
    objs = json.loads(tools.read_text())
    objs[0]["parameters"] = {"type": "dict", "properties": {"at": {"type": "str"}, "snooze": {"type": "float"},
                                                            "label": {"type": "string"}}}
    objs[1]["parameters"] = {"type": "object", "properties": {"seconds": {"type": "float"}}}
    tools.write_text(json.dumps(objs))
    assert main(["import", "pairs", str(tools), str(pairs), "--out", str(tmp_path / "out")]) == 0
    assert json.loads((tmp_path / "out" / "import.json").read_text())["unknown_types"] == {"float": 2, "str": 1}
    assert ("warning: parameter types outside JSON Schema, kept as given (import.json: unknown_types): float (2 "
            "parameters), str (1 parameters)") in capsys.readouterr().out


def test_a_json_list_where_json_lines_are_expected_names_the_shape(tmp_path, capsys):
    tools, _ = pairs_files(tmp_path)
    src = tmp_path / "pairs.jsonl"
    src.write_text(json.dumps([{"query": "set an alarm", "tool": "alarm_set"}, {"query": "a", "tool": ""}]))
    assert main(["import", "pairs", str(tools), str(src), "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err == (f"error: {src}: expected JSON Lines of (request, tool) pairs (one JSON object a "
                                       "line), got a JSON list of 2 items: write one object a line, e.g. jq -c '.[]' "
                                       "FILE > FILE.jsonl\n")


def test_a_row_with_more_cells_than_the_header_a_bom_and_one_tool_object(tmp_path, capsys):
    """An unquoted comma would cut a request's text: refused, located; Excel's BOM is not part of a column name; a
    tools file holding one OpenAI tool object is that tool, not a name -> description map."""
    tools, pairs = pairs_files(tmp_path)
    text = pairs.read_text()
    pairs.write_text(text.replace('"start a ten minute timer",timer_start', "start a ten, minute timer,timer_start", 1))
    assert main(["import", "pairs", str(tools), str(pairs), "--out", str(tmp_path / "a")]) == 2
    assert "more cells than the header's 3" in capsys.readouterr().err
    pairs.write_text(text.replace('"start a ten minute timer",timer_start,fixture', "start a ten minute timer", 1))
    assert main(["import", "pairs", str(tools), str(pairs), "--out", str(tmp_path / "a")]) == 2
    assert "1 cells, fewer than the header's 3" in capsys.readouterr().err
    pairs.write_text(text.replace('"start a ten minute timer"', '"start a ten minute timer', 1))  # a quote left open
    assert main(["import", "pairs", str(tools), str(pairs), "--out", str(tmp_path / "a")]) == 2
    assert "unreadable CSV" in capsys.readouterr().err
    pairs.write_text("\ufeff" + text)
    assert main(["import", "pairs", str(tools), str(pairs), "--out", str(tmp_path / "b")]) == 0
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"type": "function", "function": {"name": "timer_start", "description": "Start a timer",
                                                                "parameters": {"type": "object", "properties": {}}}}))
    only = tmp_path / "only.csv"
    only.write_text("query,api\nstart a ten minute timer,timer_start\ntime my tea for four minutes,timer_start\n"
                    "what is the news,\nwho won the game,\n")
    assert main(["import", "pairs", str(one), str(only), "--out", str(tmp_path / "c")]) == 0
    cat = [t["id"] for _, t in io.read_jsonl(tmp_path / "c" / "catalog.jsonl") if t["kind"] == "action"]
    assert cat == ["timer_start"]


def test_examples_per_tool_move_requests_into_the_catalog_and_out_of_the_evaluation(tmp_path, capsys):
    tools, pairs = pairs_files(tmp_path, "map")
    out = tmp_path / "run"
    assert main(["import", "pairs", str(tools), str(pairs), "--out", str(out), "--examples-per-tool", "1"]) == 0
    info, rows = json.loads((out / "import.json").read_text()), _rows(out)
    catalog = [t for _, t in io.read_jsonl(out / "catalog.jsonl")]
    examples = {e["text"]: t["id"] for t in catalog for e in t.get("examples", [])}
    assert info["examples"] == len(examples) > 0 and info["requests"] == 28 - len(examples)
    assert all(len([x for x in examples.values() if x == t]) <= 1 for t in PAIR_TOOLS)
    assert not set(examples) & {r["text"] for r in rows.values()}  # an example is no evaluation request
    for tool in set(examples.values()):  # never a tool's last request
        assert any(r["gold_tool"] == tool for r in rows.values())
    again = tmp_path / "again"
    assert main(["import", "pairs", str(tools), str(pairs), "--out", str(again), "--examples-per-tool", "1"]) == 0
    assert (again / "catalog.jsonl").read_bytes() == (out / "catalog.jsonl").read_bytes()  # the same seed, the same
    assert "examples: " in capsys.readouterr().out
