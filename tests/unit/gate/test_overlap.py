"""The overlap map: out items by their highest Jaccard with any action, cells binned on both sides, thin cells NaN."""
import numpy as np
import pandas as pd
import pytest

from conftest import tool
from toolgate.config import run as make_run
from toolgate.config import section
from toolgate.core.signals import registry
from toolgate.data.card import gold_text
from toolgate.gate import overlap
from toolgate.gate.overlap import map_paragraph, max_action_jaccard, overlap_bins, overlap_map_frame

CATALOG = [tool("set_alarm"), tool("make_call"), tool("check_battery"), tool("chat", kind="route")]
TEXT = {t["id"]: gold_text(t, "en") for t in CATALOG}
REG = registry("bm25", ["e5"])
GATE, RUN = section("gate", {"resamples": 50}), make_run(0, ("en",))


def _row(uid, text, tool_id=None):
    return {"utterance_id": uid, "pair_id": uid, "lang": "en", "text": text,
            "gold_outcome": "action" if tool_id else "delegate", "gold_tool": tool_id,
            "slice": "match" if tool_id else "out", "subtype": "x", "missing_slots": []}


# In-catalog: 4 items that are their gold text (Jaccard 1) and 4 sharing no 3-gram with it (Jaccard 0).
# Out: 4 sharing nothing with any action and 4 that are an action's text (highest Jaccard 1): 2 x 2 cells of 4 a side.
ROWS = ([_row(f"hi{i}", TEXT["set_alarm"], "set_alarm") for i in range(4)]
        + [_row(f"lo{i}", "zzzz qqqq", "make_call") for i in range(4)]
        + [_row(f"olo{i}", "xxxx wwww") for i in range(4)]
        + [_row(f"ohi{i}", TEXT["check_battery"]) for i in range(4)])


def _signals():
    """e5 scores high-overlap in items 1, low-overlap ones 0, out items 0.5; G3 is flat (AUC 0.5 everywhere)."""
    e5 = [1.0 if r["utterance_id"].startswith("hi") else 0.0 if r["gold_tool"] else 0.5 for r in ROWS]
    return pd.DataFrame({"utterance_id": [r["utterance_id"] for r in ROWS], "slice": [r["slice"] for r in ROWS],
                         "in_catalog": [int(r["gold_tool"] is not None) for r in ROWS], "e5_maxcos": e5, "g3": 0.5})


def test_out_items_take_their_highest_jaccard_over_the_actions_they_see():
    j = max_action_jaccard([_row("a", TEXT["check_battery"]), _row("b", "xxxx wwww"),
                            {**_row("c", TEXT["check_battery"]), "candidates": ["set_alarm", "chat"]}], CATALOG, 3)
    assert j[0] == 1.0 and j[1] == 0.0
    assert 0 < j[2] < 1  # only set_alarm is visible (the route entry is no action): the shared "Does" grams


def test_overlap_bins_merge_tied_quartile_edges():
    bins, edges = overlap_bins(np.array([0, 0, 0, 0, 1, 1, 1, 1.0]))
    assert list(edges) == [0, 0.5, 1] and list(bins) == [0, 0, 0, 0, 1, 1, 1, 1]


def test_cells_bin_both_sides_and_thin_cells_are_nan():
    t = overlap_map_frame(ROWS, CATALOG, _signals(), REG, GATE, RUN)
    cells = t.drop_duplicates(["in_bin", "out_bin"])
    assert list(zip(cells["in_bin"], cells["out_bin"])) == [("Q1", "Q1"), ("Q1", "Q2"), ("Q2", "Q1"), ("Q2", "Q2")]
    assert (t["n_in"] == 4).all() and (t["n_out"] == 4).all()
    assert t["value"].isna().all() and (t["note"] == f"fewer than {overlap.MIN_ITEMS} items on a side").all()
    assert list(t["name"][:3]) == ["g3", "e5_maxcos", "e5_maxcos - g3"] and len(t) == 12
    assert map_paragraph(t).endswith("0 of 4 cells with at least 10 items a side), no cell has enough items to "
                                     "compare an encoder gate with G3.")


def test_cell_aucs_by_hand_and_the_paragraph(monkeypatch):
    monkeypatch.setattr(overlap, "MIN_ITEMS", 4)
    t = overlap_map_frame(ROWS, CATALOG, _signals(), REG, GATE, RUN)
    d = t[t["name"] == "e5_maxcos - g3"].set_index(["in_bin", "out_bin"])
    for out_bin in ("Q1", "Q2"):  # low-overlap in items score below every out item, high-overlap ones above
        assert d.loc[("Q1", out_bin), ["value", "ci_low", "ci_high"]].tolist() == pytest.approx([-0.5] * 3)
        assert d.loc[("Q2", out_bin), ["value", "ci_low", "ci_high"]].tolist() == pytest.approx([0.5] * 3)
    assert (t.loc[t["name"] == "g3", "value"] == 0.5).all() and (t["note"] == "").all()
    p = map_paragraph(t)
    assert "the encoder side wins in 2 of 4 cells (in Q2 x out Q1 +0.500" in p and "G3 in 2 (in Q1 x out Q1" in p
    assert "in-catalog bins of the Jaccard with the gold text: Q1 0.000-0.500, Q2 0.500-1.000" in p
