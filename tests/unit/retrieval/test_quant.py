"""Quantization round trips and the retention task metrics on hand-computed cases."""
import numpy as np
import pytest

from toolgate.retrieval.quant import binarize, mean_cosine, quantize_int8, task_metrics


def test_quantizers_and_task_metrics():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 16)).astype(np.float32)
    assert mean_cosine(x, quantize_int8(x)) > 0.999
    assert set(np.unique(binarize(x))) == {-1.0, 1.0}
    d = np.eye(4, dtype=np.float32)
    q = np.array([[1, 0, 0, 0], [0, 0.2, 0.9, 0], [0, 0, 0, 1]], np.float32)
    m = task_metrics(q, d, np.array([0, 1, 3]))  # ranks 1, 2, 1
    assert m["top1"] == pytest.approx(2 / 3) and m["top5"] == 1.0
    assert m["ndcg10"] == pytest.approx((1 + 1 / np.log2(3) + 1) / 3)
