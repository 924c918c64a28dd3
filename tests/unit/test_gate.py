"""Gate features, AUC, bootstrap, calibration and operating points on small exact cases."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.metrics import roc_auc_score

from toolgate.bootstrap import bootstrap_frame, cluster_weights, paired_differences
from toolgate.calibration import calibrate_oof
from toolgate.gate import folds, score_features
from toolgate.metrics import auc, calibration_errors, weighted_auc
from toolgate.operating import best_within, envelope, sweep


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.booleans()), min_size=2, max_size=60))
def test_auc_equals_sklearn_with_ties(pairs):
    s = np.array([p[0] for p in pairs], float)
    y = np.array([p[1] for p in pairs], int)
    if y.min() == y.max():
        assert np.isnan(auc(s, y))
    else:
        assert auc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_weighted_auc_equals_expanded_sample():
    rng = np.random.default_rng(1)
    s, y = rng.integers(0, 4, 40).astype(float), rng.integers(0, 2, 40)
    w = rng.integers(0, 3, (5, 40))
    expected = [roc_auc_score(np.repeat(y, wi), np.repeat(s, wi)) for wi in w]
    np.testing.assert_allclose(weighted_auc(s, y, w), expected, atol=1e-12)


def test_score_features_hand_computed():
    f = score_features(np.array([[4.0, 1.0, 0.0, 3.0]]), np.array([8]), k=2).iloc[0]
    # sorted: 4, 3, 1, 0
    assert f["top_score"] == 4 and f["raw_margin"] == 1 and f["norm_margin"] == pytest.approx(0.25)
    assert f["score_over_mean"] == pytest.approx(4 / 3.5)
    p = np.exp([0, -1]) / np.exp([0, -1]).sum()
    assert f["topk_entropy"] == pytest.approx(-(p * np.log(p)).sum())
    assert f["score_per_term"] == pytest.approx(0.5) and f["length"] == 8
    zero = score_features(np.zeros((1, 3)), np.array([0]), k=2).iloc[0]
    assert zero["norm_margin"] == 0 and zero["score_over_mean"] == 0 and zero["score_per_term"] == 0


def test_folds_keep_pairs_together():
    groups = np.repeat(np.arange(50), 2)
    y = np.repeat(np.arange(50) % 3 == 0, 2).astype(int)
    for train, test in folds(y, groups, 5, seed=0):
        assert not set(groups[train]) & set(groups[test])


def test_cluster_weights_pairs_move_together_and_seed_is_reproducible():
    clusters = np.array(["a", "a", "b", "b", "c", "c"])
    w = cluster_weights(clusters, 50, seed=3)
    assert (w[:, 0] == w[:, 1]).all() and (w.sum(1) == 6).all()
    assert np.array_equal(w, cluster_weights(clusters, 50, seed=3))


def test_bootstrap_interval_contains_point_and_is_deterministic():
    rng = np.random.default_rng(0)
    n = 200
    y = np.r_[np.ones(100), np.zeros(100)].astype(int)
    sig = pd.DataFrame({"good": y + rng.normal(0, 1, n), "bad": rng.normal(0, 1, n)})
    df = paired_differences(sig, y, np.arange(n), [("good", "bad")], 2000, seed=1)
    r = df.iloc[0]
    assert r["ci_low"] < r["difference"] < r["ci_high"] and r["excludes_zero"]
    again = paired_differences(sig, y, np.arange(n), [("good", "bad")], 2000, seed=1)
    pd.testing.assert_frame_equal(df, again)


def test_bootstrap_frame_restricts_to_mismatch_slice():
    sig = pd.DataFrame({"utterance_id": list("abcdef"), "pair_id": list("aabbcc"),
                        "slice": ["match", "match", "mismatch", "mismatch", "out", "out"],
                        "in_catalog": [1, 1, 1, 1, 0, 0], "x": [9, 9, 1, 2, 0, 3], "z": [0, 0, 0, 0, 0, 0]})
    df = bootstrap_frame(sig, [("x", "z")], units=("utterance", "pair"), n_resamples=100, seed=0)
    assert df["auc_a"].iloc[0] == pytest.approx(0.5)  # mismatch {1,2} vs out {0,3}: 2 of 4 pairs
    assert list(df["cluster_unit"]) == ["utterance", "pair"]


def test_calibration_errors_hand_computed():
    p = np.array([0.05, 0.05, 0.95, 0.95])
    y = np.array([0, 1, 1, 1])
    ece, mce = calibration_errors(p, y, bins=10)
    assert ece == pytest.approx(0.5 * 0.45 + 0.5 * 0.05) and mce == pytest.approx(0.45)


def test_platt_is_monotone_so_auc_unchanged():
    rng = np.random.default_rng(0)
    s = rng.normal(size=300)
    y = (s + rng.normal(size=300) > 0).astype(int)
    fold = np.zeros(300, int)
    fold[150:] = 1
    p = calibrate_oof(s, y, fold, "platt")
    for f in (0, 1):
        m = fold == f
        assert auc(p[m], y[m]) == pytest.approx(auc(s[m], y[m]))


def test_operating_sweep_hand_computed():
    rows = [{"gold_outcome": "action", "gold_tool": "a"}, {"gold_outcome": "delegate", "gold_tool": None},
            {"gold_outcome": "chat", "gold_tool": None}, {"gold_outcome": "action", "gold_tool": "b"}]
    top1 = np.array(["a", "a", "a", "c"])  # the last in-catalog row is mis-selected
    route = np.array(["chat", "delegate", "chat", "chat"])
    score = np.array([0.9, 0.5, 0.2, 0.7])
    sw = sweep(score, rows, top1, route).set_index("threshold")
    assert sw.loc[np.inf, "coverage"] == 0.25 and sw.loc[np.inf, "danger_rate"] == 0  # only chat answered
    assert sw.loc[0.9, "coverage"] == 0.5 and sw.loc[0.9, "danger_rate"] == 0
    assert sw.loc[0.5, "danger_rate"] == 0.25 and sw.loc[0.2, "coverage"] == 0.25
    best = best_within(sw.reset_index(), budget=0.0)
    assert best["coverage"] == 0.5
    assert envelope(sw.reset_index(), np.array([0.0, 0.3])).tolist() == [0.5, 0.5]
