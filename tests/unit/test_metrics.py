"""AUC (weighted, with ties) and nDCG against scikit-learn; calibration errors and rank metrics on hand cases."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import ndcg_score, roc_auc_score

from toolgate.metrics import auc, calibration_errors, rank_metrics, weighted_auc, weighted_fpr_at_tpr


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


def test_calibration_errors_hand_computed():
    p = np.array([0.05, 0.05, 0.95, 0.95])
    y = np.array([0, 1, 1, 1])
    ece, mce = calibration_errors(p, y, bins=10)
    assert ece == pytest.approx(0.5 * 0.45 + 0.5 * 0.05) and mce == pytest.approx(0.45)


def test_fpr_at_95_tpr_by_hand():
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3])
    y = np.array([1, 0, 1, 1, 0, 1, 0])
    # 95% of 4 positives needs all 4: t* = 0.4 admits negatives 0.8 and 0.5 of 3
    assert weighted_fpr_at_tpr(s, y, np.ones(7)) == pytest.approx(2 / 3)
    assert weighted_fpr_at_tpr(s, y, np.ones(7), tpr=0.5) == pytest.approx(1 / 3)  # t* = 0.7
    tied = weighted_fpr_at_tpr(np.array([1.0, 1.0, 0.0]), np.array([1, 0, 0]), np.ones(3))
    assert tied == pytest.approx(0.5)  # a tie enters together
    w = np.array([[2, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]])
    np.testing.assert_allclose(weighted_fpr_at_tpr(s, y, w), [2 / 3, 2 / 3])


def test_rank_metrics_by_hand():
    m = rank_metrics([1, 3, 6, 11, np.inf])  # np.inf: a gold outside the ranking (a failed tournament request)
    assert (m["top1"], m["top5"], m["recall_at_5"]) == (0.2, 0.4, 0.4)
    assert m["mrr"] == pytest.approx((1 + 1 / 3 + 1 / 6 + 1 / 11) / 5)
    # DCG of one relevant item at rank r: 1 / log2(r + 1); rank 11 and beyond count 0 at 10
    assert m["ndcg_at_10"] == pytest.approx((1 + 1 / 2 + 1 / np.log2(7)) / 5)
    assert list(rank_metrics([2], top_k=3)) == ["top1", "top3", "mrr", "ndcg_at_10", "recall_at_5"]
    assert rank_metrics([2], top_k=3)["ndcg_at_10"] == pytest.approx(1 / np.log2(3))


def test_ndcg_at_10_equals_sklearn():
    rng = np.random.default_rng(3)
    scores = rng.permutation(40 * 25).reshape(40, 25).astype(float)  # distinct: no ties for sklearn to average
    gold = rng.integers(0, 25, 40)
    ranks = 1 + (scores > scores[np.arange(40), gold][:, None]).sum(1)
    assert rank_metrics(ranks)["ndcg_at_10"] == pytest.approx(ndcg_score(np.eye(25)[gold], scores, k=10), abs=1e-12)
