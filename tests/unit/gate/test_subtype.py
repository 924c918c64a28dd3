"""Gates by out-of-catalog subtype: hand-computed AUCs, subtypes taken from the data, the deciding-subtype sentence."""
import pandas as pd
import pytest

from toolgate.config import section
from toolgate.core.signals import registry
from toolgate.gate.bootstrap import NO_SLICE
from toolgate.gate.subtype import deciding_subtype_sentence, out_subtypes, subtype_frame

FULL = registry("bm25", ["e5"])
REG = {n: FULL[n] for n in ("g3", "e5_maxcos")}
GATE = section("gate", {"resamples": 50, "cluster_units": ["utterance", "pair"]})

# Two mismatch-in items against one out item of each subtype; "holdout:x" is declared only by the data.
SIGNALS = pd.DataFrame({"utterance_id": ["m1", "m2", "es", "ms", "ch", "ho"],
                        "pair_id": ["p1", "p1", "p2", "p3", "p4", "p5"],
                        "slice": ["mismatch", "mismatch", "out", "out", "out", "out"],
                        "in_catalog": [1, 1, 0, 0, 0, 0],
                        "e5_maxcos": [0.9, 0.5, 0.7, 0.95, 0.1, 0.5],
                        "g3": [0.2, 0.8, 0.1, 0.5, 0.9, 0.3]})
SUBTYPE = {"m1": "single_action", "m2": "single_action", "es": "external_service", "ms": "multistep", "ch": "chat",
           "ho": "holdout:x"}
# (e5 AUC, G3 AUC) by hand: m1 and m2 against the one out item, a tie counting one half
EXPECTED = {"external_service": (0.5, 1.0), "multistep": (0.0, 0.5), "chat": (1.0, 0.0), "holdout:x": (0.75, 0.5)}


def test_auc_per_subtype_by_hand_and_subtypes_from_the_data():
    t = subtype_frame(SIGNALS, SUBTYPE, REG, GATE, seed=0)
    assert list(dict.fromkeys(t["out_subtype"])) == list(EXPECTED)  # the generator's order, then the data's
    assert set(t["in_slice"]) == {"mismatch"} and list(dict.fromkeys(t["cluster_unit"])) == ["utterance", "pair"]
    for unit in ("utterance", "pair"):
        for st, (e5, g3) in EXPECTED.items():
            rows = t[(t["cluster_unit"] == unit) & (t["out_subtype"] == st)].set_index("name")
            assert rows.loc["e5_maxcos", "value"] == pytest.approx(e5)
            assert rows.loc["g3", "value"] == pytest.approx(g3)
            diff = rows.loc["e5_maxcos - g3"]
            assert diff["measure"] == "auc difference" and diff["value"] == pytest.approx(e5 - g3)
            assert diff["ci_low"] <= diff["value"] <= diff["ci_high"]
            assert (rows["n_in"] == 2).all() and (rows["n_out"] == 1).all()


def test_out_subtypes_keep_the_generators_order_then_sort_the_rest():
    assert out_subtypes(["holdout:b", "chat", "holdout:a", "external_service", "chat"]) == [
        "external_service", "chat", "holdout:a", "holdout:b"]


def test_a_set_without_a_mismatch_slice_uses_every_in_catalog_item():
    sig = SIGNALS.assign(slice=["in", "in", "out", "out", "out", "out"])
    t = subtype_frame(sig, {**SUBTYPE, "ms": "reject", "es": "reject", "ch": "reject", "ho": "reject"}, REG, GATE, 0)
    assert set(t["in_slice"]) == {NO_SLICE} and set(t["out_subtype"]) == {"reject"}
    assert (t["n_in"] == 2).all() and (t["n_out"] == 4).all()


def _diffs(rows):
    """A gate_by_subtype-like table of encoder - G3 rows: (subtype, name, value, ci_low, ci_high)."""
    recs = [{"cluster_unit": "utterance", "in_slice": "mismatch", "out_subtype": s, "measure": "auc difference",
             "name": n, "value": v, "ci_low": lo, "ci_high": hi} for s, n, v, lo, hi in rows]
    return pd.DataFrame(recs)


def test_the_deciding_subtype_is_the_one_where_the_claim_fails():
    t = _diffs([("external_service", "e5_maxcos - g3", 0.20, 0.10, 0.30),
                ("external_service", "usem3_maxcos - g3", 0.15, 0.05, 0.25),
                ("multistep", "e5_maxcos - g3", -0.30, -0.40, -0.20),
                ("multistep", "usem3_maxcos - g3", 0.10, 0.02, 0.18),
                ("chat", "e5_maxcos - g3", 0.05, -0.02, 0.12),
                ("chat", "usem3_maxcos - g3", 0.30, 0.20, 0.40)])
    s = deciding_subtype_sentence(t)
    assert "holds against external_service but not against multistep, chat" in s
    assert "multistep decides it" in s and "e5_maxcos - g3 -0.300 [-0.400, -0.200]" in s


def test_when_the_claim_holds_everywhere_the_narrowest_margin_decides():
    t = _diffs([("external_service", "e5_maxcos - g3", 0.20, 0.10, 0.30),
                ("chat", "e5_maxcos - g3", 0.08, 0.01, 0.15)])
    s = deciding_subtype_sentence(t)
    assert "holds against every out subtype (external_service, chat)" in s and "chat decides it" in s
    assert "no encoder - G3 rows" in deciding_subtype_sentence(t, unit="pair")
