"""The score matrix: gold ranks, top-k order, row alignment, the route step, save/load."""
import numpy as np

from scores_fixtures import ROWS, scores_of
from toolgate.scores import Scores, gold_rank, gold_ranks, load_scores, route_step, save_scores, top_actions, top_order


def test_gold_rank_ties_keep_catalog_order():
    s = np.array([[0.5, 0.9, 0.9, 0.1], [0.2, 0.2, 0.2, 0.2]])
    assert gold_rank(s, np.array([2, 0])).tolist() == [2, 1]  # tie with col 1 (earlier) -> rank 2; col 0 first
    assert gold_rank(s, np.array([1, 3])).tolist() == [1, 4]


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
