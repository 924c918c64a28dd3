"""Operating points: the sweep, best coverage within budget and the envelope, by hand."""
import numpy as np

from toolgate.gate.operating import best_coverage, best_within, envelope, outcomes, sweep, weighted_sweep


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


def test_weighted_sweep_equals_the_sweep_of_duplicated_rows():
    rows = [{"gold_outcome": o, "gold_tool": t} for o, t in
            [("action", "a"), ("delegate", None), ("chat", None), ("action", "b"), ("delegate", None)]]
    top1, route = np.array(["a", "a", "a", "c", "b"]), np.array(["chat", "delegate", "chat", "chat", "chat"])
    score = np.array([0.9, 0.5, 0.2, 0.7, 0.5])
    w = np.array([2, 1, 1, 3, 1])
    dup = np.repeat(np.arange(5), w)
    expect = sweep(score[dup], [rows[i] for i in dup], top1[dup], route[dup])
    t, danger, cov, admitted = weighted_sweep(score, outcomes(rows, top1, route), w)
    np.testing.assert_allclose(danger[0], expect["danger_rate"])
    np.testing.assert_allclose(cov[0], expect["coverage"])
    np.testing.assert_allclose(admitted[0], expect["admitted"])
    assert best_coverage(danger, cov, 0.2)[0] == best_within(expect, 0.2)["coverage"]
