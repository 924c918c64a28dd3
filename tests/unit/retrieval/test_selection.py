"""The selection evaluation on a hand-computed case."""
import numpy as np
import pytest

from scores_fixtures import ROWS, scores_of
from toolgate.retrieval.selection import selection_frame


def test_selection_frame_hand_computed():
    m = np.array([[3, 1, 0], [3, 2, 1], [0, 1, 2], [9, 9, 9]], float)
    df = selection_frame(ROWS, {"x": scores_of(m, list("abcd"))}, top_k=2).set_index(["lang", "slice"])
    # ranks: a=1, b=3, c=2
    assert df.loc[("all", "all"), "n"] == 3
    assert df.loc[("all", "all"), "top1"] == pytest.approx(1 / 3)
    assert df.loc[("all", "all"), "top2"] == pytest.approx(2 / 3)
    assert df.loc[("all", "all"), "mrr"] == pytest.approx((1 + 1 / 3 + 1 / 2) / 3)
    assert df.loc[("all", "all"), "ndcg_at_10"] == pytest.approx((1 + 1 / 2 + 1 / np.log2(3)) / 3)
    assert df.loc[("all", "all"), "recall_at_5"] == 1.0
    assert list(df.columns) == ["ranker", "n", "top1", "top2", "mrr", "ndcg_at_10", "recall_at_5"]
    assert df.loc[("ko", "mismatch"), "top1"] == 0.0


