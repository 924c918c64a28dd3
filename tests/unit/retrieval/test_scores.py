"""The score matrix: gold ranks, top-k order, row alignment, the route step, save/load."""
import numpy as np
import pytest

from scores_fixtures import ROWS, scores_of
from toolgate.core.errors import InputError
from toolgate.core.scores import (
    ROUTE_NOTE,
    SAMPLE,
    SPLIT_MIN,
    Scores,
    candidate_mask,
    gold_rank,
    gold_ranks,
    has_routes,
    load_scores,
    mode_note,
    route_note,
    route_step,
    save_scores,
    top_actions,
    top_order,
)


def test_gold_rank_ties_keep_catalog_order():
    s = np.array([[0.5, 0.9, 0.9, 0.1], [0.2, 0.2, 0.2, 0.2]])
    assert gold_rank(s, np.array([2, 0])).tolist() == [2, 1]  # tie with col 1 (earlier) -> rank 2; col 0 first
    assert gold_rank(s, np.array([1, 3])).tolist() == [1, 4]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_a_long_vector_is_ordered_exactly_as_a_stable_argsort(dtype):
    """The split ordering of long vectors (mostly zeros: one BM25 row of a large catalog) equals argsort's, with
    ties, negatives, signed zeros, infinities and NaN."""
    rng = np.random.default_rng(0)
    for n, zero_share in [(SPLIT_MIN, 0.98), (5000, 0.5), (3000, 0.0), (2048, 1.0)]:
        v = np.where(rng.random(n) < zero_share, 0.0, rng.choice([-2.0, -1.0, 0.5, 1.0, 3.0], n))
        if dtype != np.int64:
            v[rng.choice(n, 6, replace=False)] = [np.inf, -np.inf, np.nan, -0.0, np.nan, 7.25]
        v = v.astype(dtype)
        assert np.array_equal(top_order(v), np.argsort(-v, kind="stable"))
        for k in (1, 5, 40, 1500):
            assert np.array_equal(top_order(v, k), np.argsort(-v, kind="stable")[:k])


@pytest.mark.parametrize("nan_sampled", [0, 3, 12])
def test_a_shortlist_through_the_sampled_bound_is_the_stable_argsort(nan_sampled):
    """A shortlist of a long positive vector goes through the sampled lower bound of its k-th largest: equal to
    argsort's with the best entries away from the sampled positions, ties across the bound, and NaN at sampled
    positions (a smaller bound, which fewer than k entries may reach, or a NaN one: the positive entries are then
    partitioned instead)."""
    rng = np.random.default_rng(1)
    n = 16_000
    step = n // SAMPLE
    v = rng.choice([0.5, 1.0, 2.0, 3.0], n) * (rng.random(n) < 0.7)
    v[np.arange(n) % step == 1] = 9.0  # the best entries are never sampled
    v[rng.choice(np.arange(0, n, step), nan_sampled, replace=False)] = np.nan
    w = np.ones(n)  # the sampled entries the largest: NaN among them leave fewer than k entries at the bound
    w[::step] = 2.0 + rng.permutation(len(w[::step]))
    w[rng.choice(np.arange(0, n, step), nan_sampled, replace=False)] = np.nan
    for k in (1, 10, 37, 400):
        for x in (v, w):
            assert np.array_equal(top_order(x, k), np.argsort(-x, kind="stable")[:k])


def test_top_order_is_stable_and_cut():
    assert top_order(np.array([1.0, 3.0, 3.0, 0.0, 3.0])).tolist() == [1, 2, 4, 0, 3]
    assert top_order(np.array([[0.0, 2.0, 2.0], [5.0, 1.0, 5.0]]), 2).tolist() == [[1, 2], [0, 2]]


def test_rows_align_to_any_order_and_gold_ranks():
    m = np.array([[3, 1, 0], [3, 2, 1], [0, 1, 2], [9, 9, 9]], float)
    s = scores_of(m, list("abcd"))
    rev = s.for_rows(list(reversed(ROWS)))
    assert rev.utterance_ids.tolist() == list("dcba") and rev.matrix[0].tolist() == [9, 9, 9, 0]
    assert gold_ranks(s, ROWS[:3]).tolist() == [1, 3, 2]
    assert top_actions(s, ROWS[:2], 2).tolist() == [["t0", "t1"], ["t0", "t1"]]


def test_route_step_picks_the_higher_route_entry(tmp_path):
    s = Scores(np.array(["x", "y", "z"]), np.array(["a", "chat", "delegate"]), np.array(["action", "route", "route"]),
               np.array([[1.0, 0.5, 0.2], [1.0, 0.1, 0.7], [0.0, 0.3, 0.3]]))
    assert route_step(s, [{"utterance_id": u} for u in "xyz"]).tolist() == ["chat", "delegate", "delegate"]
    save_scores(tmp_path / "s.npz", s)
    back = load_scores(tmp_path / "s.npz")
    assert back.tool_ids.tolist() == s.tool_ids.tolist() and np.array_equal(back.matrix, s.matrix)


def test_a_score_matrix_cut_short_or_missing_an_array_is_named(tmp_path):
    s = Scores(np.array(["x"]), np.array(["a", "chat"]), np.array(["action", "route"]), np.array([[1.0, 0.5]]))
    save_scores(tmp := tmp_path / "s.npz", s)
    whole = tmp.read_bytes()
    for bad in (whole[: len(whole) // 2], b"", b"not a zip"):
        tmp.write_bytes(bad)
        with pytest.raises(InputError, match="cannot be read as a score matrix .*; delete it and run snakemake") as e:
            load_scores(tmp)
        assert e.value.path == str(tmp)
    np.savez(tmp, matrix=s.matrix)
    with pytest.raises(InputError, match="cannot be read as a score matrix"):
        load_scores(tmp)
    np.save(npy := tmp_path / "plain.npy", s.matrix)  # one array, not the archive
    with pytest.raises(InputError, match="cannot be read as a score matrix"):
        load_scores(npy)
    with pytest.raises(InputError, match="no score matrix here: run snakemake"):
        load_scores(tmp_path / "none.npz")


def test_candidates_hide_other_actions_and_keep_routes():
    m = np.array([[3, 1, 0], [3, 2, 1], [0, 1, 2]], float)
    s = scores_of(m, list("abc"))
    rows = [{**ROWS[0]}, {**ROWS[1], "candidates": ["t1", "t2"]}, {**ROWS[2], "candidates": ["t1"]}]
    aligned = s.for_rows(rows)
    assert aligned.matrix[0].tolist() == [3, 1, 0, 0]  # no list: the whole catalog
    assert aligned.matrix[1].tolist() == [-np.inf, 2, 1, 0]  # t0 hidden, the route entry stays
    assert aligned.matrix[2].tolist() == [-np.inf, 1, -np.inf, 0]
    assert s.matrix[1, 0] == 3  # the saved matrix is untouched
    # b's gold t2 is 3rd of the catalog but 2nd of its own list; c's gold t1 is 1st of its list of one
    assert gold_ranks(s, rows).tolist() == [1, 2, 1]
    assert top_actions(s, rows[1:2], 2).tolist() == [["t1", "t2"]]
    assert mode_note(rows) == "Candidates: each request's own list (2 of 3, mean 1.5 tools)."
    assert mode_note(ROWS) == "Candidates: the whole catalog." and candidate_mask(ROWS, s.tool_ids, s.kinds) is None


def test_route_step_without_route_entries_delegates():
    s = Scores(np.array(["x", "y"]), np.array(["a", "b"]), np.array(["action", "action"]), np.ones((2, 2)))
    assert not has_routes(s.tool_ids) and route_note(s) == ROUTE_NOTE
    assert route_step(s, [{"utterance_id": "x"}, {"utterance_id": "y"}]).tolist() == ["delegate", "delegate"]
