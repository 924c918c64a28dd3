import numpy as np
import pandas as pd
import pytest

from toolgate.core.scores import gold_rank
from toolgate.retrieval.ablation import candidate_correct, candidate_rank, crossover_frame, seeded_ranks


def test_candidate_correct_ties_and_full_catalog():
    s = np.array([[1.0, 2, 2, 0], [3, 3, 1, 0]])
    gold = np.array([1, 1])
    assert candidate_correct(s, gold, 4, np.random.default_rng(0)).tolist() == [True, False]
    rng = np.random.default_rng(1)
    big = rng.integers(0, 5, (200, 30)).astype(float)
    g = rng.integers(0, 30, 200)
    full = candidate_correct(big, g, 30, rng)
    assert np.array_equal(full, gold_rank(big, g) == 1)  # full catalog = selection top-1


def test_candidate_rank_among_the_drawn_sets():
    s = np.array([[5.0, 1, 3, 3, 2]])
    gold = np.array([3])
    assert candidate_rank(s, gold, 5, np.random.default_rng(0)).tolist() == [3]  # 5 and the tie at column 2 first
    ranks = seeded_ranks(s, gold, 2, 200, 13)  # one distractor: ahead of gold only if it is column 0 or 2
    assert ranks.shape == (200, 1) and set(ranks.ravel()) == {1, 2}
    assert (ranks == 2).mean() == pytest.approx(0.5, abs=0.1)
    assert np.array_equal(seeded_ranks(s, gold, 9, 2, 13), [[3], [3]])  # k above the catalog: the full catalog


def test_small_candidate_sets_are_easier_and_contain_gold():
    rng = np.random.default_rng(0)
    s = rng.normal(size=(500, 40))
    g = rng.integers(0, 40, 500)
    acc = [candidate_correct(s, g, k, np.random.default_rng(k)).mean() for k in (2, 10, 40)]
    assert acc[0] > acc[1] > acc[2]
    assert acc[0] == pytest.approx(0.5, abs=0.08)  # random scores: 1/k


def test_crossover_hand_computed():
    rows = []
    for ranker, m, mm in (("bm25", 0.9, 0.3), ("enc", 0.8, 0.5)):
        for slc, v in (("match", m), ("mismatch", mm)):
            rows.append({"ranker": ranker, "k": 7, "lang": "all", "slice": slc, "top1_mean": v, "top1_std": 0.01})
    c = crossover_frame(pd.DataFrame(rows), "bm25", ["enc"]).iloc[0]
    # 0.9p + 0.3(1-p) = 0.8p + 0.5(1-p)  ->  p = 0.2 / 0.3
    assert c["crossover_p"] == pytest.approx(2 / 3) and c["note"] == "BM25 better above p" and not c["unstable"]


def test_crossover_hybrid_columns_compare_with_the_better_member():
    rows = []
    for ranker, m, mm in (("bm25", 0.9, 0.3), ("enc", 0.8, 0.5), ("rrf", 0.89, 0.45)):
        for slc, v in (("match", m), ("mismatch", mm)):
            rows.append({"ranker": ranker, "k": 7, "lang": "all", "slice": slc, "top1_mean": v, "top1_std": 0.02})
    c = crossover_frame(pd.DataFrame(rows), "bm25", ["enc"], {"rrf": ["bm25", "enc"]}).iloc[0]
    # match: 0.89 - 0.9 = -0.01 (within 0.02); mismatch: 0.45 - 0.5 = -0.05 (outside)
    assert c["rrf_vs_best_match"] == pytest.approx(-0.01) and c["rrf_vs_best_mismatch"] == pytest.approx(-0.05)
    assert not c["rrf_within_spread"]
