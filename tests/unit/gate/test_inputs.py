"""Raw gate signals by hand: score features, encoder features, rank agreement, exemplar kNN."""

import numpy as np
import pandas as pd
import pytest

from toolgate.core.inputs import (
    EMPTY,
    agreement_frame,
    by_size,
    by_visible,
    encoder_frame,
    exemplar_knn,
    exemplar_max,
    raw_signals,
    request_signals,
    score_features,
)


def test_score_features_hand_computed():
    f = score_features(np.array([[4.0, 1.0, 0.0, 3.0]]), np.array([8]), k=2).iloc[0]
    # sorted: 4, 3, 1, 0
    assert f["top_score"] == 4 and f["raw_margin"] == 1 and f["norm_margin"] == pytest.approx(0.25)
    assert f["score_over_mean"] == pytest.approx(4 / 3.5)
    p = np.exp([0, -1]) / np.exp([0, -1]).sum()
    assert f["topk_entropy"] == pytest.approx(-(p * np.log(p)).sum())
    assert f["score_per_term"] == pytest.approx(0.5) and f["length"] == 8
    zero = score_features(np.zeros((1, 3)), np.array([0]), k=2).iloc[0]
    assert zero["norm_margin"] == 0 and zero["score_over_mean"] == 0 and zero["score_per_term"] == 0


def test_score_features_see_only_each_rows_candidates():
    inf = -np.inf
    m = np.array([[4.0, inf, 1.0, 3.0], [inf, 2.0, inf, inf], [4.0, 0.5, 1.0, 3.0]])
    f = score_features(m, np.array([8, 5, 8]), k=5)
    own = score_features(np.array([[4.0, 1.0, 3.0]]), np.array([8]), k=5).iloc[0]
    assert np.allclose(f.iloc[0].to_numpy(), own.to_numpy())  # the hidden column counts for nothing
    one = f.iloc[1]  # a single visible tool: the second score is 0
    assert (one["top_score"], one["raw_margin"], one["norm_margin"], one["score_over_mean"], one["topk_entropy"]) == (
        2.0, 2.0, 1.0, 1.0, 0.0)
    assert np.allclose(f.iloc[2].to_numpy(), score_features(m[2:], np.array([8]), k=5).iloc[0].to_numpy())
    assert np.isfinite(f.to_numpy()).all()


def test_encoder_features_by_hand():
    f = encoder_frame("e5", np.array([[0.2, 0.9, 0.5, 0.4], [0.1, 0.1, 0.3, 0.0]]), k=3)
    np.testing.assert_allclose(f["e5_maxcos"], [0.9, 0.3])
    np.testing.assert_allclose(f["e5_margin"], [0.4, 0.2])
    np.testing.assert_allclose(f["e5_topk_mean"], [(0.9 + 0.5 + 0.4) / 3, (0.3 + 0.1 + 0.1) / 3])
    one = encoder_frame("e5", np.array([[-0.2]]), k=5)  # a single candidate: the absent runner-up counts 0
    assert one.iloc[0].tolist() == pytest.approx([-0.2, -0.2, -0.2])


def test_rank_agreement_on_a_tiny_matrix():
    lexical = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 1.0], [2.0, 2.0, 0.0]])
    cosine = np.array([[0.9, 0.1, 0.5], [0.7, 0.2, 0.9], [0.4, 0.4, 0.4]])
    f = agreement_frame("bm25", "e5", lexical, cosine)
    # row 0: both pick column 0; row 1: BM25's column 1 is third for e5; row 2: ties go to column 0 on both sides
    assert f["e5_agrees"].tolist() == [1.0, 0.0, 1.0]
    assert f["e5_bm25_rr"].tolist() == pytest.approx([1.0, 1 / 3, 1.0])


def test_by_visible_compacts_hidden_tools_and_reassembles_rows_in_order():
    inf = -np.inf
    lex = np.array([[1.0, inf, 2.0], [inf, 5.0, inf], [3.0, 0.0, 3.0]])
    cos = np.array([[0.1, 0.9, 0.2], [0.8, 0.3, 0.7], [0.4, 0.6, 0.4]])  # column 1 hidden on row 0, etc.
    seen = []

    def frame(idx, lx, c):
        seen.append((idx.tolist(), c.tolist()))
        return pd.DataFrame({"m": [lx.shape[1]] * len(idx), "first_cos": c[:, 0]})

    out = by_visible([lex, cos], frame)
    assert out["m"].tolist() == [2, 1, 3] and out["first_cos"].tolist() == [0.1, 0.3, 0.4]
    assert ([0], [[0.1, 0.2]]) in seen  # the hidden column is dropped from every matrix, order kept


def test_encoder_and_agreement_features_on_per_request_candidates_are_finite():
    # an encoder's cosines of hidden tools are -inf too: features, margins and agreement stay finite
    inf = -np.inf
    cos = np.array([[0.5, inf, 0.2], [inf, 0.7, inf]])
    lex = np.array([[1.0, inf, 2.0], [inf, 3.0, inf]])
    f = by_visible([cos, lex], lambda _, c, lx: pd.concat([encoder_frame("e5", c, 3), agreement_frame("bm25", "e5", lx, c)],
                                                          axis=1))
    assert np.isfinite(f.to_numpy()).all()
    assert f["e5_agrees"].tolist() == [0.0, 1.0] and f.iloc[1]["e5_maxcos"] == 0.7


def _unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_exemplar_knn_never_sees_the_pair_partner_even_in_training_folds():
    # rows 0/1 are a pair with identical embeddings; 2 is another in-catalog request; 3 is out of catalog
    emb = _unit([[1, 0, 0], [1, 0, 0], [1, 1, 0], [0, 0, 1]])
    y = np.array([1, 1, 1, 0])
    groups = np.array(["p", "p", "q", "r"])
    leaky = [(np.array([1, 2, 3]), np.array([0])), (np.array([0, 2, 3]), np.array([1])),
             (np.array([0, 1, 3]), np.array([2, 3]))]  # folds NOT grouped: the partner sits in training
    knn = exemplar_knn(emb, y, groups, leaky)
    assert knn[0] == pytest.approx(1 / np.sqrt(2)) and knn[1] == pytest.approx(1 / np.sqrt(2))  # row 2, not 1.0
    assert knn[2] == pytest.approx(1 / np.sqrt(2)) and knn[3] == pytest.approx(0.0)
    only_partner = [(np.array([1]), np.array([0]))]
    assert exemplar_knn(emb, y, groups, only_partner)[0] == EMPTY  # nothing admissible is left


def test_exemplar_knn_reads_only_exemplars_of_the_rows_candidates():
    emb = _unit([[1, 0], [1, 0.1], [0, 1], [1, 0.2]])
    y = np.array([1, 1, 1, 0])
    gold = ["a", "b", "c", None]
    candidates = [["a"], ["b"], ["c"], ["c"]]  # row 3 (out) may only see exemplars of c
    fold_list = [(np.array([1, 2]), np.array([0, 3])), (np.array([0, 3]), np.array([1, 2]))]
    knn = exemplar_knn(emb, y, np.array(["0", "1", "2", "3"]), fold_list, gold, candidates)
    assert knn[3] == pytest.approx(emb[3] @ emb[2])  # c's exemplar, not the closer b one
    assert knn[0] == EMPTY  # no exemplar of a in the training part


# ----------------------------------------------------------------------------------------------- measures


def test_exemplar_max_by_hand():
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    memory = np.array([[0.6, 0.8], [1.0, 0.0]])
    assert np.allclose(exemplar_max(q, memory), [1.0, 0.8])
    assert np.allclose(exemplar_max(q, np.zeros((0, 2))), [EMPTY, EMPTY])


def test_a_deployed_knn_is_the_study_knn_with_one_fold_of_all_exemplars():
    rng = np.random.default_rng(1)
    emb = rng.normal(size=(6, 3))
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    y, groups = np.array([1, 1, 1, 0, 0, 0]), np.arange(6)
    study = exemplar_knn(emb, y, groups, [(np.arange(3), np.arange(3, 6))])
    assert np.allclose(study[3:], exemplar_max(emb[3:], emb[:3]))


def test_request_signals_are_raw_signals_with_the_knn_given():
    rng = np.random.default_rng(2)
    lex, cos = rng.uniform(0, 5, (8, 4)), rng.uniform(-1, 1, (8, 4))
    emb = rng.normal(size=(8, 3))
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    split = (np.array([1, 0] * 4), np.arange(8), [(np.arange(4), np.arange(4, 8)), (np.arange(4, 8), np.arange(4))])
    raw = raw_signals(("bm25", lex), {"enc": (cos, emb)}, np.full(8, 10), split, 3)
    again = request_signals(("bm25", lex), {"enc": cos}, np.full(8, 10), 3, {"enc": raw["enc_knn"].to_numpy()})
    assert list(again) == list(raw) and np.allclose(again.to_numpy(), raw.to_numpy())


def test_one_group_and_many_groups_assemble_the_same_rows():
    import pandas as pd
    frame = lambda idx: pd.DataFrame({"i": np.asarray(idx, float) * 2})  # noqa: E731
    one, many = by_size([3, 3, 3], frame), by_size([3, 2, 3], frame)
    assert one["i"].tolist() == [0, 2, 4] and many["i"].tolist() == [0, 2, 4]
