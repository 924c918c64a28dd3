"""BM25 score features on a hand case; folds keep a request and its translation together."""
import numpy as np
import pytest

from toolgate.gate.inputs import score_features
from toolgate.gate.models import folds


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


def test_score_features_see_only_each_rows_candidates():
    inf = -np.inf
    m = np.array([[4.0, inf, 1.0, 3.0], [inf, 2.0, inf, inf], [4.0, 0.5, 1.0, 3.0]])
    f = score_features(m, np.array([8, 5, 8]), k=5)
    own = score_features(np.array([[4.0, 1.0, 3.0]]), np.array([8]), k=5).iloc[0]
    assert np.allclose(f.iloc[0].to_numpy(), own.to_numpy())  # the hidden column counts for nothing
    one = f.iloc[1]  # a single visible tool: the second score is 0
    assert (one["top_score"], one["raw_margin"], one["norm_margin"], one["score_over_mean"], one["topk_entropy"]) == (
        2.0, 2.0, 1.0, 1.0, 0.0)
    assert np.allclose(f.iloc[2].to_numpy(), score_features(m[2:], np.array([8]), k=5).iloc[0].to_numpy())
    assert np.isfinite(f.to_numpy()).all()
