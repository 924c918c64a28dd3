"""router_loco and label-free re-targeting: the held-out catalogs the selection ranks by, and the anchors' maths."""
import numpy as np
import pandas as pd
import pytest

from selection_fixtures import experiment
from toolgate.core.artifact import RouterError
from toolgate.core.calibration import platt_probability
from toolgate.core.catalog import own_queries
from toolgate.core.retarget import retargeted_manifest
from toolgate.router.loco import held_out
from toolgate.router.product import selection_of


def loco(tmp_path, rows) -> str:
    """A router_loco.csv of (candidate, test set, accuracy minus the ladder, ci_high) rows, unchanged mode."""
    frame = pd.DataFrame([{"candidate": c, "test_set": s, "mode": "unchanged", "accuracy_minus_ladder": d,
                           "ci_low": d - 0.05, "ci_high": hi} for c, s, d, hi in rows])
    extra = frame.assign(mode="re-targeted", accuracy_minus_ladder=-0.9, ci_high=-0.8)  # never read
    path = tmp_path / "router_loco.csv"
    pd.concat([frame, extra]).to_csv(path, index=False)
    return str(path)


def test_held_out_takes_the_worst_set_and_the_sets_below_the_ladder(tmp_path):
    t = pd.read_csv(loco(tmp_path, [("a", "x", 0.10, 0.2), ("a", "y", -0.03, 0.01), ("b", "x", -0.2, -0.1),
                                    ("b", "y", 0.0, 0.1)]))
    h = held_out(t)
    assert h["a"] == {"worst": -0.03, "worst_set": "y", "below": []}
    assert h["b"] == {"worst": -0.2, "worst_set": "x", "below": ["x"]}


def test_the_selection_ranks_by_the_worst_held_out_catalog(tmp_path):
    """Within the set, clean and the ladder tie (the ladder wins the tie); held out, clean is ahead on its worst
    catalog and ships, and the why says so; noise, below the ladder on one catalog, is out."""
    exp = experiment(tmp_path, gates=["clean", "noise"])
    exp.input.loco = [loco(tmp_path, [("bm25+clean", "x", 0.05, 0.1), ("bm25+clean", "y", 0.08, 0.1),
                                   ("bm25+noise", "x", -0.3, -0.1), ("bm25+noise", "y", 0.4, 0.5),
                                   ("ladder", "x", 0.0, 0.0), ("ladder", "y", 0.0, 0.0)])]
    sel = selection_of(exp)
    t = sel.table.set_index("candidate")
    assert t.loc["bm25+noise", "held_out_below"] == "x"  # below the ladder on x: not eligible
    assert sel.chosen.name == "bm25+clean" and "worst held-out catalog x at +0.050" in sel.why
    assert t.loc["bm25+clean", "held_out_worst"] == 0.05 and t.loc["bm25+clean", "held_out_worst_set"] == "x"


def test_an_interval_below_the_ladder_on_one_catalog_excludes_a_candidate(tmp_path):
    exp = experiment(tmp_path, gates=["clean"])
    exp.input.loco = [loco(tmp_path, [("bm25+clean", "x", 0.3, 0.4), ("bm25+clean", "y", -0.1, -0.01),
                                   ("ladder", "x", 0.0, 0.0), ("ladder", "y", 0.0, 0.0)])]
    sel = selection_of(exp)
    assert sel.chosen.name == "ladder"
    assert sel.table.set_index("candidate").loc["bm25+clean", "held_out_below"] == "y"


def test_without_held_out_catalogs_the_table_keeps_its_columns(tmp_path):
    sel = selection_of(experiment(tmp_path, gates=["clean"]))
    assert "held_out_worst" not in sel.table and "held-out" not in sel.why


def band(coef=2.0, intercept=-1.0):
    return {"pipeline": {"kind": "band"}, "calibrator": {"coef": coef, "intercept": intercept},
            "thresholds": {"execute": 0.9, "confirm": 0.5}}


def test_anchors_move_a_band_calibrator_by_hand():
    """fit anchors in 4, out 0; new in 10, out 2: scale 0.5, so a new value v reads as (v - 2) * 0.5 on the fit
    scale: coef 2 -> 1, intercept -1 -> -1 + 2 * (0 - 0.5 * 2) = -3."""
    m = retargeted_manifest(band(), {"in": 4.0, "out": 0.0}, {"in": 10.0, "out": 2.0})
    assert m["calibrator"] == {"coef": 1.0, "intercept": -3.0} and m["retarget"]["scale"] == 0.5
    assert m["thresholds"] == band()["thresholds"]  # on P(in catalog): they stay
    v = np.array([2.0, 6.0, 10.0])
    assert np.allclose(platt_probability(v, 1.0, -3.0), platt_probability((v - 2) * 0.5, 2.0, -1.0))


def test_anchors_move_the_ladders_thresholds_by_hand():
    ladder = {"pipeline": {"kind": "ladder"}, "calibrator": {"coef": 1.0, "intercept": 0.0},
              "thresholds": {"execute": 3.0, "confirm": 1.0}}
    m = retargeted_manifest(ladder, {"in": 4.0, "out": 0.0}, {"in": 10.0, "out": 2.0})
    assert (m["thresholds"]["execute"], m["thresholds"]["confirm"]) == (8.0, 4.0)  # 2 + 3 / 0.5, 2 + 1 / 0.5
    assert m["calibrator"] == ladder["calibrator"] and ladder["thresholds"]["execute"] == 3.0  # a copy


def test_anchors_without_a_direction_are_refused():
    with pytest.raises(RouterError, match="cannot re-target without labels"):
        retargeted_manifest(band(), {"in": 4.0, "out": 0.0}, {"in": 1.0, "out": 2.0})


def test_own_queries_are_every_actions_texts_in_each_language():
    cat = [{"id": "a", "kind": "action", "names": {"en": "Alarm", "ko": "알람"}, "descriptions": {"en": "Set it"}},
           {"id": "chat", "kind": "route", "names": {"en": "Chat"}, "descriptions": {"en": "talk"}}]
    assert own_queries(cat, ("en", "ko")) == ["Alarm Set it", "알람"]


def test_adapt_with_anchors_records_them_and_loads(tmp_path):
    from conftest import write_jsonl
    from router_fixtures import catalog, make_artifact
    from toolgate.core.runtime import Router
    from toolgate.router.export import adapt_router

    (tmp_path / "src").mkdir()
    src = make_artifact(tmp_path / "src", real_gate=False)
    path = write_jsonl(tmp_path / "small.jsonl", [t for t in catalog() if t["id"] != "make_call"])
    m, _ = adapt_router(src, path, tmp_path / "out", calibrate="anchors")
    assert set(m["retarget"]) == {"method", "bank", "fit", "new", "scale"} and m["retarget"]["scale"] > 0
    assert Router.load(tmp_path / "out").manifest["retarget"] == m["retarget"]


def test_adapt_warns_that_anchors_routed_worse_and_names_the_recommended_path(tmp_path, capsys):
    """Issue 53, item 8: re-targeting without labels lowered routed accuracy on every external set measured, so
    the command says so and points at the router as exported; adapt without it says nothing of the kind."""
    from conftest import write_jsonl
    from router_fixtures import catalog, make_artifact
    from toolgate.cli import main

    (tmp_path / "src").mkdir()
    src = make_artifact(tmp_path / "src", real_gate=False)
    path = write_jsonl(tmp_path / "small.jsonl", [t for t in catalog() if t["id"] != "make_call"])
    argv = ["adapt", str(src), "--catalog", str(path), "--out"]
    assert main([*argv, str(tmp_path / "moved"), "--calibrate", "anchors"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: re-targeting without labels (--calibrate anchors) routed worse than the unchanged "
                          "router on every external set it was measured on (tables/router_eval.csv")
    assert "the recommended path is the router as exported (adapt without --calibrate)" in err
    assert main([*argv, str(tmp_path / "plain")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_memo_scores_as_the_ranker_and_hands_out_read_only_arrays(small_catalog):
    """router_loco's shared BM25 scores: the ranker's own, kept per text, and no caller can change them."""
    from toolgate.core.rankers import fit_ranker
    from toolgate.core.text import Terms
    from toolgate.router.loco import Memo

    bm25 = fit_ranker({"type": "bm25", "variant": "E1"}, small_catalog, ("en",), Terms())
    memo, texts = Memo(bm25), ["set alarm", "call someone"]
    np.testing.assert_array_equal(memo.score_many(texts), bm25.score_many(texts))
    np.testing.assert_array_equal(memo.score("set alarm"), bm25.score("set alarm"))
    assert memo.score_many(texts) is memo.score_many(list(texts))
    with pytest.raises(ValueError):
        memo.score("set alarm")[0] = 1.0
