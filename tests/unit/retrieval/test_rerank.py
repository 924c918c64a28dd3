"""Reranking the lexical shortlist on a hand-computed case."""
import numpy as np
import pytest

from scores_fixtures import scores_of
from toolgate.retrieval.rerank import rerank_frame, rerank_top1


def test_rerank_recovered_share():
    lex = np.array([[3, 2, 1, 0], [3, 2, 1, 0], [3, 2, 1, 0]], float)
    rr = np.array([[0, 5, 0, 0], [0, 0, 5, 0], [0, 0, 0, 9]], float)
    short, top1 = rerank_top1(lex, rr, 3)
    assert short.tolist() == [[0, 1, 2]] * 3 and top1.tolist() == [1, 2, 0]  # col 3 is outside the shortlist
    rows = [{"utterance_id": u, "lang": "en", "slice": "match", "gold_outcome": "action", "gold_tool": g}
            for u, g in zip("xyz", ["t1", "t2", "t3"])]
    df = rerank_frame(rows, scores_of(lex, list("xyz")), {"enc": scores_of(rr, list("xyz"))}, k=3)
    row = df[(df["lang"] == "all") & (df["slice"] == "all")].iloc[0]
    # lexical top1 0/3, top3 2/3 (t3 is 4th), reranked top1 2/3 -> recovered (2/3-0)/(2/3-0) = 1
    assert (row["top1_lexical"], row["top3_lexical"], row["top1_reranked"]) == pytest.approx((0, 2 / 3, 2 / 3))
    assert row["recovered_share"] == pytest.approx(1.0)


