"""Band pipelines: the guard against the ladder, expected metrics, MCC."""
import numpy as np
import pytest
from sklearn.metrics import matthews_corrcoef

from toolgate.routing.baselines import Gold, baselines_frame
from toolgate.routing.pipelines import mcc, pipeline_metrics, versus_ladder

from .test_baselines import CATALOG, ROWS


def test_pipeline_guard_against_the_ladder():
    rng = np.random.default_rng(1)
    g = Gold(ROWS * 25, CATALOG)
    right_kind, right_tool = np.array(["action", "ask", "delegate", "chat"] * 25), np.array(["a", "b", "", ""] * 25)
    ladder = (right_kind, right_tool)
    # the pipeline executes a random third of the gold-delegate requests: less accurate than the ladder
    pipe_kind = np.where((right_kind == "delegate") & (rng.random(100) < 1 / 3), "action", right_kind)
    pipe = (pipe_kind, np.where(pipe_kind == "action", "a", right_tool))
    guard = versus_ladder(pipe, ladder, g, 500, 3, np.arange(100))
    wrong = (pipe_kind != right_kind).sum()
    assert guard["ladder_accuracy"] == 1.0 and guard["accuracy_minus_ladder"] == pytest.approx(-wrong / 100)
    assert guard["ci_low"] <= guard["accuracy_minus_ladder"] <= guard["ci_high"] < 0
    # the same resamples as routing_baselines' gated - single_pool_ladder interval
    _, diffs = baselines_frame({"single_pool_ladder": ladder, "gated": pipe}, g, 500, 3, np.arange(100))
    d = diffs.set_index("metric").loc["accuracy"]
    assert (guard["ci_low"], guard["ci_high"]) == (d["ci_low"], d["ci_high"])
    better = versus_ladder(ladder, pipe, g, 500, 3, np.arange(100))
    assert better["ci_low"] > 0 and better["ladder_accuracy"] == pytest.approx(1 - wrong / 100)


def test_pipeline_expected_metrics_with_fidelity():
    g = Gold(ROWS, CATALOG)
    kind = np.array(["action", "ask", "ask", "chat"])
    tool = np.array(["a", "b", "a", ""])
    gold_in_band = np.array([False, True, False, False])
    chat_ok = np.array([False, False, False, True])
    m = pipeline_metrics(kind, tool, g, gold_in_band, chat_ok, f=0.8)
    # u1 executed right (1), u2 approved with 0.8, u3 rejected -> delegate (correct), u4 chat
    assert m["completion"] == pytest.approx((1 + 0.8 + 1 + 1) / 4)
    assert m["coverage"] == pytest.approx((1 + 0.8 + 1) / 4)
    assert (m["band_size"], m["ask_rate"], m["danger_rate"]) == (2, 0.5, 0.0)
    assert m["ask_band_top1"] == 0.5 and m["accuracy"] == 0.75


def test_mcc_matches_sklearn():
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 4, 100).astype(str), rng.integers(0, 4, 100).astype(str)
    assert mcc(y, p, np.ones((1, 100)))[0] == pytest.approx(matthews_corrcoef(y, p))
    w = rng.integers(0, 3, 100)
    assert mcc(y, p, w[None])[0] == pytest.approx(matthews_corrcoef(np.repeat(y, w), np.repeat(p, w)))
