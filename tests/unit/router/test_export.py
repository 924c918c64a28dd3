"""router.export: thresholds a deployed router ships."""
import numpy as np

from toolgate.router.export import in_gap


def test_a_threshold_moves_into_the_gap_below_it():
    v = np.array([0.1, 1 / 6, 0.5, 0.9])
    assert in_gap(v, 0.5) == (1 / 6 + 0.5) / 2  # a value 1e-10 below 0.5 still counts as >= the threshold
    assert in_gap(v, 0.1) == 0.0 and in_gap(v, 0.3) == (1 / 6 + 0.3) / 2  # nothing below the lowest: 0
    for t in (0.1, 0.3, 0.5, 0.9):
        assert ((v >= in_gap(v, t)) == (v >= t)).all()
