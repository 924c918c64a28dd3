"""Report lookups, the claims ledger's failure mode and the regression check's diff."""
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from toolgate.check import check, run_check
from toolgate.report import ledger, lookup, side_by_side

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tables_dir(tmp_path):
    d = tmp_path / "tables"
    d.mkdir()
    pd.DataFrame({"ranker": ["bm25", "e5"], "lang": ["all", "all"], "slice": ["match", "match"], "top1": [0.98, 0.91]}) \
        .to_csv(d / "selection.csv", index=False)
    return d


def test_lookup_with_roles(tables_dir):
    t = {"selection": pd.read_csv(tables_dir / "selection.csv")}
    spec = {"table": "selection", "where": {"ranker": "{encoder}", "slice": "match"}, "column": "top1", "scale": 100}
    assert lookup(t, spec) == pytest.approx(91.0)
    with pytest.raises(KeyError, match="was not produced"):
        lookup(t, {**spec, "table": "nope"})
    with pytest.raises(KeyError, match="0 rows match"):
        lookup(t, {**spec, "where": {"ranker": "colbert"}})


def test_side_by_side_explains_missing(tables_dir):
    t = {"selection": pd.read_csv(tables_dir / "selection.csv")}
    rep = [{"key": "a", "value": 0.99, "ours": {"table": "selection", "where": {"ranker": "bm25"}, "column": "top1"}},
           {"key": "b", "value": 1, "ours": {"table": "gate_auc", "column": "x"}},
           {"key": "c", "value": 2, "why": "needs a GPU"}]
    df = side_by_side(rep, t).set_index("key")
    assert df.loc["a", "reproduced"] == "0.980" and df.loc["a", "difference"] == "-0.010"
    assert "not computable" in df.loc["b", "note"] and df.loc["c", "note"] == "needs a GPU"


def test_ledger_marks_missing_tables_not_computable():
    led = ledger({})
    assert set(led["verdict"]) == {"not computable"} and len(led) >= 11


def test_check_reports_a_readable_diff_after_an_edit(tables_dir, tmp_path):
    exp = tmp_path / "expected.yaml"
    exp.write_text(yaml.safe_dump({"experiment": "x", "entries": [
        {"name": "bm25 top1", "table": "selection", "where": {"ranker": "bm25"}, "column": "top1", "value": 0.98, "tol": 0},
        {"name": "e5 top1", "table": "selection", "where": {"ranker": "e5"}, "column": "top1", "value": 0.90, "tol": 0.02}]}))
    assert run_check(tables_dir, exp)
    df = pd.read_csv(tables_dir / "selection.csv")
    df.loc[0, "top1"] = 0.97  # a perturbed headline value
    df.to_csv(tables_dir / "selection.csv", index=False)
    failures, passes = check(tables_dir, exp)
    assert len(failures) == 1 and len(passes) == 1
    assert re.search(r"bm25 top1: selection.csv top1 \[ranker=bm25\]: expected 0.9800 \+- 0, got 0.9700 \(diff -0.0100\)",
                     failures[0])


def test_reported_yaml_is_well_formed():
    rep = yaml.safe_load((ROOT / "data/paper/reported.yaml").read_text())
    keys = [e["key"] for e in rep]
    assert len(keys) == len(set(keys)) > 100
    smk = (ROOT / "workflow/rules/common.smk").read_text()
    produced = set(re.search(r"TABLES = \[(.*?)\]", smk, re.S).group(1).replace('"', "").replace("\n", "").replace(" ", "").split(","))
    for e in rep:
        assert ("ours" in e) != ("why" in e), e["key"]
        if "ours" in e and not e["ours"]["table"].startswith("native"):
            assert e["ours"]["table"] in produced, e["key"]
