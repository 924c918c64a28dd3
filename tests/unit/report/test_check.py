"""The headline regression check's readable diff."""
import re

import pandas as pd
import yaml

from report_fixtures import ROLES, tables_dir  # noqa: F401  (fixture)
from toolgate.report.check import check, run_check


def test_check_reports_a_readable_diff_after_an_edit(tables_dir, tmp_path):
    exp = tmp_path / "expected.yaml"
    exp.write_text(yaml.safe_dump({"experiment": "x", "entries": [
        {"name": "bm25 top1", "table": "selection", "where": {"ranker": "bm25"}, "column": "top1", "value": 0.98, "tol": 0},
        {"name": "e5 top1", "table": "selection", "where": {"ranker": "e5"}, "column": "top1", "value": 0.90, "tol": 0.02}]}))
    assert run_check(tables_dir, exp, ROLES)
    df = pd.read_csv(tables_dir / "selection.csv")
    df.loc[0, "top1"] = 0.97  # a perturbed headline value
    df.to_csv(tables_dir / "selection.csv", index=False)
    failures, passes = check(tables_dir, exp, ROLES)
    assert len(failures) == 1 and len(passes) == 1
    assert re.search(r"bm25 top1: selection.csv top1 \[ranker=bm25\]: expected 0.9800 \+- 0, got 0.9700 \(diff -0.0100\)",
                     failures[0])


def test_an_expected_nan_matches_only_nan(tables_dir, tmp_path):
    pd.DataFrame({"ranker": ["bm25"], "top1": [float("nan")]}).to_csv(tables_dir / "selection.csv", index=False)
    exp = tmp_path / "expected.yaml"
    exp.write_text(yaml.safe_dump({"experiment": "x", "entries": [
        {"name": "none", "table": "selection", "where": {"ranker": "bm25"}, "column": "top1", "value": float("nan"),
         "tol": 0.05}]}))
    assert run_check(tables_dir, exp, ROLES)
    pd.DataFrame({"ranker": ["bm25"], "top1": [0.5]}).to_csv(tables_dir / "selection.csv", index=False)
    assert not run_check(tables_dir, exp, ROLES)
