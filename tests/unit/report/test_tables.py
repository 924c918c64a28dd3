"""Paper-value lookups and the side-by-side table; reported.yaml's shape and the keys table notes cite."""
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from report_fixtures import ROLES, tables_dir  # noqa: F401  (fixture)
from toolgate.report.tables import lookup, side_by_side

ROOT = Path(__file__).resolve().parents[3]


def test_lookup_with_roles(tables_dir):
    t = {"selection": pd.read_csv(tables_dir / "selection.csv")}
    spec = {"table": "selection", "where": {"ranker": "{encoder}", "slice": "match"}, "column": "top1", "scale": 100}
    assert lookup(t, spec, ROLES) == pytest.approx(91.0)
    with pytest.raises(KeyError, match="was not produced"):
        lookup(t, {**spec, "table": "nope"}, ROLES)
    with pytest.raises(KeyError, match="0 rows match"):
        lookup(t, {**spec, "where": {"ranker": "colbert"}}, ROLES)


def test_side_by_side_explains_missing(tables_dir):
    t = {"selection": pd.read_csv(tables_dir / "selection.csv")}
    rep = [{"key": "a", "value": 0.99, "ours": {"table": "selection", "where": {"ranker": "bm25"}, "column": "top1"}},
           {"key": "b", "value": 1, "ours": {"table": "gate_auc", "column": "x"}},
           {"key": "c", "value": 2, "why": "needs a GPU"}]
    df = side_by_side(rep, t, ROLES).set_index("key")
    assert df.loc["a", "reproduced"] == "0.980" and df.loc["a", "difference"] == "-0.010"
    assert "not computable" in df.loc["b", "note"] and df.loc["c", "note"] == "needs a GPU"


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


def test_every_paper_key_cited_by_a_table_note_exists():
    keys = [e["key"] for e in yaml.safe_load((ROOT / "data/paper/reported.yaml").read_text())]
    cited = set()
    for path in (ROOT / "workflow/toolgate").rglob("*.py"):
        for group in re.findall(r"paper=\(([^)]*)\)|PAPER_KEYS = \(([^)]*)\)", path.read_text()):
            cited |= set(re.findall(r'"([a-z0-9_.]+)"', " ".join(group)))
    assert len(cited) >= 10
    for prefix in cited:
        assert any(k.startswith(prefix) for k in keys), prefix


def test_a_value_not_available_is_said_so():
    t = {"routing_baselines": pd.DataFrame({"metric": ["accuracy", "mutating_false_positive"], "gated": [0.8, None],
                                            "note": [None, "not available: the catalog's actions have no mutating flags"]})}
    spec = {"table": "routing_baselines", "where": {"metric": "mutating_false_positive"}, "column": "gated"}
    with pytest.raises(KeyError, match="not available: the catalog's actions have no mutating flags"):
        lookup(t, spec, ROLES)
    assert lookup(t, {**spec, "where": {"metric": "accuracy"}}, ROLES) == 0.8
