"""Selection, reranking and quantization metrics on hand-computed cases."""
import numpy as np
import pytest

from toolgate.quant import binarize, mean_cosine, quantize_int8, task_metrics
from toolgate.rerank import rerank_frame, rerank_top1
from toolgate.selection import Scores, gold_rank, selection_frame


def test_gold_rank_ties_keep_catalog_order():
    s = np.array([[0.5, 0.9, 0.9, 0.1], [0.2, 0.2, 0.2, 0.2]])
    assert gold_rank(s, np.array([2, 0])).tolist() == [2, 1]  # tie with col 1 (earlier) -> rank 2; col 0 first
    assert gold_rank(s, np.array([1, 3])).tolist() == [1, 4]


def _scores(matrix, uids):
    n = matrix.shape[1]
    return Scores(np.array(uids), np.array([f"t{i}" for i in range(n)] + ["chat"]), np.array(["action"] * n + ["route"]),
                  np.hstack([matrix, np.zeros((len(uids), 1))]))


ROWS = [{"utterance_id": "a", "lang": "en", "slice": "match", "gold_tool": "t0"},
        {"utterance_id": "b", "lang": "en", "slice": "mismatch", "gold_tool": "t2"},
        {"utterance_id": "c", "lang": "ko", "slice": "mismatch", "gold_tool": "t1"},
        {"utterance_id": "d", "lang": "ko", "slice": "out", "gold_tool": None}]


def test_selection_frame_hand_computed():
    m = np.array([[3, 1, 0], [3, 2, 1], [0, 1, 2], [9, 9, 9]], float)
    df = selection_frame(ROWS, {"x": _scores(m, list("abcd"))}, top_k=2).set_index(["lang", "slice"])
    # ranks: a=1, b=3, c=2
    assert df.loc[("all", "all"), "n"] == 3
    assert df.loc[("all", "all"), "top1"] == pytest.approx(1 / 3)
    assert df.loc[("all", "all"), "top2"] == pytest.approx(2 / 3)
    assert df.loc[("all", "all"), "mrr"] == pytest.approx((1 + 1 / 3 + 1 / 2) / 3)
    assert df.loc[("ko", "mismatch"), "top1"] == 0.0


def test_rerank_recovered_share():
    lex = np.array([[3, 2, 1, 0], [3, 2, 1, 0], [3, 2, 1, 0]], float)
    rr = np.array([[0, 5, 0, 0], [0, 0, 5, 0], [0, 0, 0, 9]], float)
    short, top1 = rerank_top1(lex, rr, 3)
    assert short.tolist() == [[0, 1, 2]] * 3 and top1.tolist() == [1, 2, 0]  # col 3 is outside the shortlist
    rows = [{"utterance_id": u, "lang": "en", "slice": "match", "gold_tool": g} for u, g in zip("xyz", ["t1", "t2", "t3"])]
    df = rerank_frame(rows, _scores(lex, list("xyz")), {"enc": _scores(rr, list("xyz"))}, k=3)
    row = df[(df["lang"] == "all") & (df["slice"] == "all")].iloc[0]
    # lexical top1 0/3, top3 2/3 (t3 is 4th), reranked top1 2/3 -> recovered (2/3-0)/(2/3-0) = 1
    assert (row["top1_lexical"], row["top3_lexical"], row["top1_reranked"]) == pytest.approx((0, 2 / 3, 2 / 3))
    assert row["recovered_share"] == pytest.approx(1.0)


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
