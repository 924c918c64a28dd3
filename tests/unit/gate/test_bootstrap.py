"""Cluster bootstrap: paired weights, reproducible intervals, the mismatch slice."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from toolgate.config import section
from toolgate.experiment import Experiment
from toolgate.gate.bootstrap import (
    NO_SLICE,
    Resamples,
    auc_measures,
    bootstrap_frame,
    paired_differences,
    write_bootstrap,
)
from toolgate.metrics import weighted_auc, weighted_fpr_at_tpr
from toolgate.stats import cluster_weights, percentile_interval, resampled_means


def test_cluster_weights_pairs_move_together_and_seed_is_reproducible():
    clusters = np.array(["a", "a", "b", "b", "c", "c"])
    w = cluster_weights(clusters, 50, seed=3)
    assert (w[:, 0] == w[:, 1]).all() and (w.sum(1) == 6).all()
    assert np.array_equal(w, cluster_weights(clusters, 50, seed=3))
    assert w.dtype == float and np.array_equal(w, np.round(w))  # whole draw counts, as the floats consumers use


def test_weighted_auc_gathers_the_weights_once_to_the_same_bits():
    rng = np.random.default_rng(0)
    scores, y = rng.integers(0, 5, 40).astype(float), rng.random(40) < 0.5  # many ties
    w = cluster_weights(np.arange(40) // 2, 30, seed=1)
    order = np.argsort(scores, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(scores[order]) != 0])
    wp, wn = (np.add.reduceat((w * m)[:, order], starts, axis=1) for m in (y, ~y))
    expected = (wp * (np.cumsum(wn, axis=1) - wn + 0.5 * wn)).sum(1) / (wp.sum(1) * wn.sum(1))
    assert np.array_equal(weighted_auc(scores, y, w), expected)  # bit for bit


def test_resampled_means_are_paired_and_intervals_skip_nan():
    clusters = np.array(["a", "a", "b", "c"])
    boot = resampled_means({"x": np.array([1.0, 1, 0, 0]), "y": np.array([1.0, 1, 0, 1])}, clusters, 300, 5)
    assert (boot["y"] >= boot["x"]).all()  # same resamples: y is never below x
    assert boot["x"].min() == 0 and boot["x"].max() == 1  # all draws of b and c, all draws of a
    assert percentile_interval(np.array([0.0, np.nan, 1.0]), 1.0) == (0.0, 1.0)


def test_bootstrap_interval_contains_point_and_is_deterministic():
    rng = np.random.default_rng(0)
    n = 200
    y = np.r_[np.ones(100), np.zeros(100)].astype(int)
    sig = pd.DataFrame({"good": y + rng.normal(0, 1, n), "bad": rng.normal(0, 1, n)})
    df = paired_differences(sig, y, np.arange(n), [("good", "bad")], Resamples(2000, seed=1))
    r = df.iloc[0]
    assert r["ci_low"] < r["difference"] < r["ci_high"] and r["excludes_zero"]
    again = paired_differences(sig, y, np.arange(n), [("good", "bad")], Resamples(2000, seed=1))
    pd.testing.assert_frame_equal(df, again)


def test_auc_measures_share_the_resamples_of_paired_differences():
    rng = np.random.default_rng(2)
    y = np.r_[np.ones(30), np.zeros(30)].astype(int)
    sig = pd.DataFrame({"a": y + rng.normal(0, 1, 60), "b": rng.normal(0, 1, 60)})
    rows = pd.DataFrame(auc_measures(sig, y, np.arange(60) // 2, ["a", "b"], [("a", "b")], Resamples(200, seed=4)))
    assert list(rows["measure"]) == ["auc", "auc", "auc difference"] and rows["name"].iloc[2] == "a - b"
    diff = paired_differences(sig, y, np.arange(60) // 2, [("a", "b")], Resamples(200, seed=4)).iloc[0]
    assert rows.iloc[2][["value", "ci_low", "ci_high"]].tolist() == diff[["difference", "ci_low", "ci_high"]].tolist()
    assert rows["value"].iloc[0] == diff["auc_a"] and rows["ci_low"].iloc[0] < diff["auc_a"] < rows["ci_high"].iloc[0]


def test_bootstrap_frame_restricts_to_mismatch_slice():
    sig = pd.DataFrame({"utterance_id": list("abcdef"), "pair_id": list("aabbcc"),
                        "slice": ["match", "match", "mismatch", "mismatch", "out", "out"],
                        "in_catalog": [1, 1, 1, 1, 0, 0], "x": [9, 9, 1, 2, 0, 3], "z": [0, 0, 0, 0, 0, 0]})
    df = bootstrap_frame(sig, [("x", "z")], units=("utterance", "pair"), n_resamples=100, seed=0)
    assert df["auc_a"].iloc[0] == pytest.approx(0.5)  # mismatch {1,2} vs out {0,3}: 2 of 4 pairs
    assert list(df["cluster_unit"]) == ["utterance", "pair"]


def _signals(slices):
    n = len(slices)
    rng = np.random.default_rng(0)
    cols = {c: rng.normal(size=n) for c in ("e5_maxcos", "usem3_maxcos", "g3", "g3_no_length", "length_fitted")}
    return pd.DataFrame({"utterance_id": [f"u{i}" for i in range(n)], "pair_id": [f"p{i // 2}" for i in range(n)],
                         "slice": slices, "in_catalog": [int(s != "out") for s in slices], **cols})


@pytest.mark.parametrize("slices, title", [(["match", "mismatch", "out", "out"] * 5, "mismatch-in vs out"),
                                           (["in", "in", "out", "out"] * 5, "all in vs out (no mismatch slice)")])
def test_bootstrap_title_names_the_slice_of_its_rows(tmp_path, slices, title):
    _signals(slices).to_csv(tmp_path / "signals.csv", index=False)
    exp = Experiment(SimpleNamespace(roles=section("roles"), gate=section("gate", {"resamples": 20}),
                                     run=SimpleNamespace(seed=0)),
                     input=SimpleNamespace(signals=tmp_path / "signals.csv"),
                     output=SimpleNamespace(table=tmp_path / "bootstrap.csv"))
    df = write_bootstrap(exp)
    heading = (tmp_path / "bootstrap.md").read_text(encoding="utf-8").splitlines()[0]
    assert heading == f"# Cluster bootstrap: paired AUC differences, {title}"
    assert set(df["slice"]) == {"mismatch" if "mismatch" in slices else NO_SLICE}


def test_paired_differences_takes_any_measure():
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(30), np.zeros(30)].astype(int)
    sig = pd.DataFrame({"good": y + rng.normal(0, 0.5, 60), "bad": rng.normal(0, 1, 60)})
    df = paired_differences(sig, y, np.arange(60), [("good", "bad")], Resamples(200, 0), metric=("fpr", weighted_fpr_at_tpr))
    assert {"fpr_a", "fpr_b"} <= set(df.columns) and df["difference"].iloc[0] < 0
