"""The fitted gates' protocol: folds."""
import numpy as np

from toolgate.stats import folds


def test_folds_keep_pairs_together():
    groups = np.repeat(np.arange(50), 2)
    y = np.repeat(np.arange(50) % 3 == 0, 2).astype(int)
    for train, test in folds(y, groups, 5, seed=0):
        assert not set(groups[train]) & set(groups[test])
