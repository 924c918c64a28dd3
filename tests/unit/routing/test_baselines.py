"""Routing decisions and metrics on hand-built cases."""
import numpy as np
import pandas as pd

from toolgate.core.scores import Scores
from toolgate.routing.baselines import Gold, baselines_frame, correct, indicators, standalone

CATALOG = [{"id": "a", "kind": "action", "mutating": True}, {"id": "b", "kind": "action", "mutating": False},
           {"id": "chat", "kind": "route", "mutating": False}, {"id": "delegate", "kind": "route", "mutating": False},
           {"id": "clarify", "kind": "route", "mutating": False}]
ROWS = [{"utterance_id": "u1", "gold_outcome": "action", "gold_tool": "a"},
        {"utterance_id": "u2", "gold_outcome": "ask", "gold_tool": "b"},
        {"utterance_id": "u3", "gold_outcome": "delegate", "gold_tool": None},
        {"utterance_id": "u4", "gold_outcome": "chat", "gold_tool": None}]


def test_standalone_uses_the_whole_pool():
    m = np.array([[5, 1, 0, 0, 0], [0, 1, 0, 0, 3], [4, 0, 0, 1, 0], [0, 0, 2, 1, 0]], float)
    s = Scores(np.array(["u1", "u2", "u3", "u4"]), np.array([t["id"] for t in CATALOG]),
               np.array([t["kind"] for t in CATALOG]), m)
    kind, tool = standalone(s, ROWS)
    assert kind.tolist() == ["action", "ask", "action", "chat"] and tool.tolist() == ["a", "", "a", ""]
    g = Gold(ROWS, CATALOG)
    assert correct(kind, tool, g).tolist() == [True, False, False, True]
    ind = indicators(kind, tool, g)
    assert ind["delegate_to_skill"][0].sum() == 1 and ind["delegate_to_skill"][1].sum() == 1
    assert ind["mutating_false_positive"][0].tolist() == [False, False, True, False]


def test_baseline_differences_have_intervals():
    g = Gold(ROWS * 10, CATALOG)
    right = (np.array(["action", "ask", "delegate", "chat"] * 10), np.array(["a", "b", "", ""] * 10))
    wrong = (np.array(["action"] * 40), np.array(["c"] * 40))
    table, diffs = baselines_frame({"x": wrong, "y": right}, g, 200, 0, np.arange(40))
    acc = table.set_index("metric").loc["accuracy"]
    assert (acc["x"], acc["y"], acc["y_count"], acc["y_of"]) == (0.0, 1.0, 40, 40)
    d = diffs.set_index("metric").loc["accuracy"]
    assert d["difference"] == 1.0 and d["ci_low"] == d["ci_high"] == 1.0


def test_no_mutating_flags_says_not_available_never_zero():
    catalog = [{k: v for k, v in t.items() if k != "mutating"} for t in CATALOG]
    g = Gold(ROWS * 10, catalog)
    assert g.mutating is None and "mutating_false_positive" not in indicators(np.array(["action"] * 40),
                                                                           np.array(["a"] * 40), g)
    right = (np.array(["action", "ask", "delegate", "chat"] * 10), np.array(["a", "b", "", ""] * 10))
    table, _ = baselines_frame({"x": right, "y": right}, g, 50, 0, np.arange(40))
    row = table.set_index("metric").loc["mutating_false_positive"]
    assert list(table["metric"])[:2] == ["delegate_to_skill", "mutating_false_positive"]
    assert pd.isna(row["x"]) and pd.isna(row["x_count"]) and row["note"].startswith("not available")
    assert table.set_index("metric").loc["accuracy", "x_count"] == 40  # counts stay integers
