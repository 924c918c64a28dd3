"""Leave one catalog out: a gate fitted on one set, applied unchanged to another (hand-made sets whose answers are
known: a feature that separates in- from out-of-catalog requests one way on two sets and the other way on a third)."""
import numpy as np
import pandas as pd

from toolgate.config import section
from toolgate.core.signals import Signal
from toolgate.gate.loco import LabelledSet, loco_frame


def _set(sign: float, n: int = 40, seed: int = 0) -> LabelledSet:
    rng = np.random.default_rng(seed)
    y = np.repeat([1, 0], n // 2)
    x = sign * (2.0 * y - 1) + 0.1 * rng.standard_normal(n)  # separates perfectly, in the direction of sign
    raw = 0.5 + 0.3 * y  # a raw signal that fits nothing
    within = x * sign  # what an out-of-fold fit on the set itself would give (perfect)
    frame = pd.DataFrame({"x": x, "fit": within, "raw": raw})
    return LabelledSet(frame, y, np.arange(n).astype(str))


REG = {"fit": Signal("fit", "fitted", "a fitted gate", "fitted", inputs=("x",), compared=True),
       "raw": Signal("raw", "encoder", "a raw gate", "raw", compared=True),
       "x": Signal("x", "score_feature", "its input", "x")}


def test_transfer_keeps_or_flips_the_separation_it_was_fitted_on():
    sets = {"a": _set(1.0, seed=1), "b": _set(1.0, seed=2), "flip": _set(-1.0, seed=3)}
    t = loco_frame(sets, REG, section("gate", {"resamples": 200}), 0).set_index(["gate", "test_set", "mode", "fit_set"])["auc"]
    assert t["fit", "a", "within", "a"] == 1.0 and t["fit", "a", "transfer", "b"] == 1.0
    assert t["fit", "a", "transfer", "flip"] == 0.0 and t["fit", "flip", "transfer", "a"] == 0.0  # fitted the other way
    assert t["fit", "flip", "pooled", "a + b"] == 0.0  # the two agreeing sets pooled, applied to the third
    assert t["raw", "flip", "raw", "none"] == 1.0 and ("raw", "flip", "transfer", "a") not in t.index
    assert "x" not in t.index.get_level_values("gate")  # an input, not a compared gate


def test_a_subset_never_tests_its_superset_and_one_class_sets_are_left_out():
    full = _set(1.0, seed=4)
    sub = LabelledSet(full.frame.iloc[10:30].reset_index(drop=True), full.y[10:30], full.clusters[10:30])
    one = LabelledSet(full.frame.iloc[:20], full.y[:20], full.clusters[:20])  # in-catalog requests only
    t = loco_frame({"bfcl": full, "bfcl_2plus": sub, "other": _set(1.0, seed=5), "ones": one}, REG, section("gate", {"resamples": 100}), 0)
    pairs = set(zip(t["test_set"], t["fit_set"]))
    assert ("bfcl_2plus", "bfcl") not in pairs and ("bfcl", "bfcl_2plus") not in pairs
    assert ("other", "bfcl + bfcl_2plus") not in pairs and ("other", "ones") not in pairs
    assert "ones" not in set(t["test_set"]) and (t["ci_low"] <= t["auc"]).all() and (t["auc"] <= t["ci_high"]).all()


def test_catalog_relative_g3_joins_when_every_set_has_its_scale():
    """G3-rel divides the scale-bearing score features by the catalog's own scale: within one set that is a constant,
    so it separates as G3 does there; across sets it is what a catalog's score scale no longer shifts."""
    from toolgate.core.signals import FEATURES
    from toolgate.gate.loco import G3_REL, SCALED

    def scored(scale, seed):
        rng = np.random.default_rng(seed)
        y = np.repeat([1, 0], 30)
        f = {name: rng.standard_normal(60) for name in FEATURES}
        for name in SCALED:  # in catalog: a higher score, in the catalog's own units
            f[name] = scale * (1.0 + y + 0.3 * rng.standard_normal(60))
        return LabelledSet(pd.DataFrame({**f, "catalog_scale": scale}), y, np.arange(60).astype(str))

    sets = {"small": scored(1.0, 1), "large": scored(10.0, 2)}
    t = loco_frame(sets, {G3_REL.name: G3_REL}, section("gate", {"resamples": 100}), 0)
    assert set(t["gate"]) == {"g3_rel"} and set(t["mode"]) == {"within", "transfer"}
    assert (t["auc"] > 0.9).all()  # fitted on one scale, it separates on the other as well


def test_catalog_scale_is_the_median_self_score_of_its_actions():
    from conftest import tool
    from toolgate.config import run
    from toolgate.core.rankers import fit_ranker
    from toolgate.gate.loco import catalog_scale
    cat = [tool("set_alarm"), tool("make_call"), tool("chat", required=(), kind="route", mutating=False)]
    r = run(0, ("en",))
    ranker = fit_ranker({"type": "bm25", "variant": "E1"}, cat, ("en",), r.text)
    by_hand = np.median([np.max(ranker.score(f"{t['names']['en']} {t['descriptions']['en']}")) for t in cat[:2]])
    assert catalog_scale(cat, {"type": "bm25", "variant": "E1"}, ("en",), r.text) == by_hand > 0


def test_the_figure_names_each_set_and_keeps_one_style_per_fitted_on_set():
    from toolgate.core.signals import registry
    from toolgate.report.plots import CHANCE, gate_loco_figure

    rows = [{"gate": g, "kind": "fitted", "test_set": t, "mode": m, "fit_set": f, "auc": 0.7, "ci_low": 0.6,
             "ci_high": 0.8, "n_in": 10, "n_out": 5}
            for t in ("mine", "functionchat", "bfcl") for g in ("g3", "g3_rel")
            for m, f in [("within", t), ("pooled", "pool")] + [("transfer", o) for o in ("mine", "functionchat", "bfcl")
                                                             if o != t]]
    rows += [{**rows[0], "gate": "top_score", "mode": "raw", "fit_set": "none", "test_set": t}
             for t in ("mine", "functionchat", "bfcl")]
    fig = gate_loco_figure(pd.DataFrame(rows), registry("bm25", ["e5"]), "mine")
    assert [ax.get_title() for ax in fig.axes] == ["tested on mine: 10 in / 5 out",
                                                   "tested on functionchat_calldecision (external): 10 in / 5 out",
                                                   "tested on bfcl (external): 10 in / 5 out"]  # two panels a row
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "within", "raw", "fitted on the other sets pooled", "fitted on functionchat", "fitted on bfcl",
        "fitted on mine", "top BM25 score (ladder)", CHANCE]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][1] == "G3-rel (catalog-relative)"
    for fit in ("functionchat", "bfcl", "mine"):  # one marker and colour per fitted-on set, in every panel
        styles = {(ln.get_marker(), ln.get_color()) for ax in fig.axes for ln in ax.get_lines()
                  if ln.get_label() == f"fitted on {fit}"}
        assert len(styles) == 1
