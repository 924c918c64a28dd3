"""The headline regression check's readable diff."""
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from report_fixtures import ROLES, tables_dir  # noqa: F401  (fixture)
from toolgate.report.check import check, run_check
from toolgate.report.tables import load_tables, lookup, side_by_side

ROOT = Path(__file__).resolve().parents[3]


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


def test_a_table_not_utf8_and_an_expected_file_of_numbers_are_one_line(tables_dir, tmp_path):
    from toolgate.core.errors import InputError

    exp = tmp_path / "expected.yaml"
    exp.write_text("- 1\n")
    with pytest.raises(InputError, match="a paper-values file is a list of entries") as e:
        check(tables_dir, exp, ROLES)
    assert e.value.field == "[0]"
    (tables_dir / "selection.csv").write_bytes(b"ranker,top1\n\xff,1\n")
    with pytest.raises(InputError, match="not UTF-8") as e:
        load_tables(tables_dir)
    assert e.value.line == 2


def test_reproduced_in_the_report_is_checks_within_tolerance_count(tmp_path):
    """The side-by-side table's `within` and `toolgate check --expected data/paper/reported.yaml` apply one tolerance:
    the report's "N of M paper values are reproduced" is the check's count of passes."""
    d = tmp_path / "tables"
    d.mkdir()
    pd.DataFrame({"signal": ["g3", "length", "e5_maxcos"], "auc_mismatch": [0.72, 0.25, 0.60]}).to_csv(d / "gate_auc.csv", index=False)
    pd.DataFrame({"metric": ["delegate_to_skill", "delegations"], "gated_count": [14, 200]}).to_csv(
        d / "routing_baselines.csv", index=False)
    pd.DataFrame({"a": ["e5_maxcos", "g3"], "difference": [0.10, -0.01]}).to_csv(d / "bootstrap.csv", index=False)
    pd.DataFrame({"ranker": ["bm25"], "median_ms": [0.16]}).to_csv(d / "cost.csv", index=False)
    pd.DataFrame({"encoder": ["e5", "e5"], "k": [10, 70], "crossover_p": [None, None]}).to_csv(d / "crossover.csv", index=False)

    def entry(key, value, unit, table, where, column, **more):
        ours = {"table": table, "where": where, "column": column, **more.pop("ours", {})}
        return {"key": key, "value": value, "unit": unit, "ours": ours, **more}
    reported = [
        entry("g3", 0.697, "auc", "gate_auc", {"signal": "g3"}, "auc_mismatch"),               # +0.023: within 0.03
        entry("e5", 0.806, "auc", "gate_auc", {"signal": "{encoder}_maxcos"}, "auc_mismatch"),  # -0.206: differs
        entry("length", 0.743, "auc", "gate_auc", {"signal": "length"}, "auc_mismatch",
              ours={"complement": True}),                                                       # 1 - 0.25: within
        entry("gated", 12, "count", "routing_baselines", {"metric": "delegate_to_skill"}, "gated_count", of=150),
        entry("delegations", 141, "count", "routing_baselines", {"metric": "delegations"}, "gated_count", of=600),
        entry("e5-g3", 0.109, "auc_difference", "bootstrap", {"a": "e5_maxcos"}, "difference", ci=[0.059, 0.159]),
        entry("g3-six", 0.110, "auc_difference", "bootstrap", {"a": "g3"}, "difference", ci=[0.073, 0.147]),
        entry("latency", 0.14, "ms", "cost", {"ranker": "{lexical}"}, "median_ms"),             # +14%: within 25%
        entry("k10", None, "crossover", "crossover", {"k": 10}, "crossover_p"),                 # none and none
        entry("k70", 0.725, "crossover", "crossover", {"k": 70}, "crossover_p"),                # none: differs
        entry("missing", 0.5, "fraction", "pipelines", {"pipeline": "P1"}, "coverage"),         # not computed
        {"key": "why", "value": 1111, "unit": "ms", "why": "needs a served model"}]
    path = tmp_path / "reported.yaml"
    path.write_text(yaml.safe_dump(reported))
    sbs = side_by_side(reported, load_tables(d), ROLES).set_index("key")
    assert list(sbs.index[sbs["within"] == "yes"]) == ["g3", "length", "gated", "e5-g3", "latency", "k10"]
    assert list(sbs.index[sbs["within"] == "no"]) == ["e5", "delegations", "g3-six", "k70"]
    assert sbs.loc["length", "reproduced"] == "0.750" and sbs.loc["length", "source"].startswith("1 - tables/gate_auc")
    assert sbs.loc["gated", "tolerance"] == "+- 4.5 (3% of 150)" and sbs.loc["e5-g3", "tolerance"] == "in the paper's [0.059, 0.159]"
    assert (sbs.loc["k10", "paper"], sbs.loc["k10", "reproduced"]) == ("none", "none")
    failures, passes = check(d, path, ROLES)
    assert len(passes) == (sbs["within"] == "yes").sum() == 6
    assert len(failures) == (sbs["within"] == "no").sum() + 1  # the value not computed is a failure of the check
    assert any(line.startswith("- missing: pipelines.csv coverage") and "missing" in line for line in failures)
    assert any("length: gate_auc.csv auc_mismatch [signal=length]: paper 0.7430 +- 0.03, got 0.7500" in line
               for line in passes)
    assert not run_check(d, path, ROLES)


def test_the_length_row_reads_the_papers_orientation():
    """The paper's untransformed length AUC (0.743) takes out-of-catalog requests as positive, as the data check's
    target does; gate_auc.csv keeps raw signals unoriented (in-catalog positive), so the lookup reads 1 - its row."""
    rep = {e["key"]: e for e in yaml.safe_load((ROOT / "data/paper/reported.yaml").read_text())}
    assert rep["gate.query_length.auc_raw"]["ours"] == {"table": "gate_auc", "where": {"signal": "length"},
                                                       "column": "auc_mismatch", "complement": True}
    assert "complement" not in rep["gate.query_length.auc_fitted_oof"]["ours"]  # a fitted signal is oriented by its fit
    t = {"gate_auc": pd.DataFrame({"signal": ["length"], "auc_mismatch": [0.2462]})}
    assert lookup(t, rep["gate.query_length.auc_raw"]["ours"], ROLES) == pytest.approx(0.7538)
