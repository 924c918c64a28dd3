"""AUC (weighted, with ties) against scikit-learn; calibration errors on a hand case."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from toolgate.metrics import auc, calibration_errors, weighted_auc, weighted_fpr_at_tpr


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
