"""gate.inputs: the signal formulas the gate study and a deployed router share."""
import numpy as np

from toolgate.gate.inputs import EMPTY, by_size, exemplar_knn, exemplar_max, raw_signals, request_signals


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
