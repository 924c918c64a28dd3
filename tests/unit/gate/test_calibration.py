"""Out-of-fold calibration keeps the ranking."""
import numpy as np
import pytest

from toolgate.core.calibration import calibrate_oof
from toolgate.metrics import auc


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
