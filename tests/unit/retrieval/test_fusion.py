"""Fusion arithmetic (reciprocal rank, convex) and the in-memory hybrid ranker, by hand."""
import numpy as np
import pytest

from toolgate.core.fusion import HybridRanker, combine, minmax, ranks, rrf

INF = -np.inf


def test_ranks_ties_share_the_best_rank_and_hidden_last():
    assert ranks(np.array([[1.0, 3.0, 3.0, INF, 0.0]])).tolist() == [[3, 1, 1, 5, 4]]


def test_ranks_equal_scipy_rankdata_min():
    from scipy.stats import rankdata

    rng = np.random.default_rng(1)
    m = rng.choice([0.0, 0.25, 1.0, 2.5, INF], size=(40, 70))
    m[:, :3] = rng.random((40, 3))  # distinct values beside the ties
    assert np.array_equal(ranks(m), rankdata(-m, method="min", axis=1).astype(int))


def test_rrf_does_not_turn_catalog_position_into_a_signal():
    # BM25 scores columns 1-4 all 0; e5 puts column 4 first and column 1 second: with ties ranked in catalog
    # order column 1 would win on position alone (1/62 + 1/62 > 1/65 + 1/61)
    a = np.array([[5.0, 0.0, 0.0, 0.0, 0.0]])
    b = np.array([[0.1, 0.8, 0.0, 0.0, 0.9]])
    out = rrf([a, b], 60)
    assert out[0, 4] > out[0, 1]


def test_convex_at_the_grid_ends_keeps_hidden_tools_out():
    a, b = np.array([[1.0, INF, 0.0]]), np.array([[0.2, INF, 0.4]])
    for w in (0.0, 1.0):
        out = combine([a, b], "convex", 60, w)
        assert out[0, 1] == INF and np.isfinite(out[0, [0, 2]]).all()


def test_rrf_hand_computed():
    a = np.array([[3.0, 2.0, 1.0]])  # ranks 1 2 3
    b = np.array([[0.1, 0.9, 0.5]])  # ranks 3 1 2
    out = rrf([a, b], 60)
    assert out[0].tolist() == pytest.approx([1 / 61 + 1 / 63, 1 / 62 + 1 / 61, 1 / 63 + 1 / 62])
    assert int(np.argmax(out)) == 1


def test_rrf_ranks_among_visible_candidates_only():
    a = np.array([[5.0, INF, 1.0]])
    b = np.array([[0.2, INF, 0.4]])
    out = rrf([a, b], 1)
    assert out[0, 1] == INF and out[0, 0] == pytest.approx(1 / 2 + 1 / 3) and out[0, 2] == pytest.approx(1 / 3 + 1 / 2)


def test_minmax_per_row_flat_row_and_hidden():
    out = minmax(np.array([[2.0, 4.0, 3.0], [1.0, 1.0, INF]]))
    assert out[0].tolist() == [0.0, 1.0, 0.5] and out[1, :2].tolist() == [0.0, 0.0] and out[1, 2] == INF


def test_convex_hand_computed():
    a, b = np.array([[0.0, 10.0, 5.0]]), np.array([[1.0, 0.0, 0.8]])
    # w = 0.25: 0.25 * [0, 1, .5] + 0.75 * [1, 0, .8] = [.75, .25, .725]
    assert combine([a, b], "convex", 60, 0.25)[0].tolist() == pytest.approx([0.75, 0.25, 0.725])


def test_hybrid_ranker_single_query_equals_batch():
    h = HybridRanker([_Fixed([3.0, 1.0, 2.0]), _Fixed([0.1, 0.9, 0.5])], "rrf", 60)
    assert h.score("q").tolist() == h.score_many(["q", "r"])[1].tolist()


class _Fixed:
    def __init__(self, row):
        self.row = np.asarray(row, float)

    def score(self, q):
        return self.row

    def score_many(self, qs):
        return np.tile(self.row, (len(qs), 1))
