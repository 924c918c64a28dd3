"""A one-table results folder shared by the report tests."""
import pandas as pd
import pytest

from toolgate.config import section

ROLES = section("roles")


@pytest.fixture
def tables_dir(tmp_path):
    d = tmp_path / "tables"
    d.mkdir()
    pd.DataFrame({"ranker": ["bm25", "e5"], "lang": ["all", "all"], "slice": ["match", "match"], "top1": [0.98, 0.91]}) \
        .to_csv(d / "selection.csv", index=False)
    return d


def claim_tables(better: bool = True) -> dict[str, pd.DataFrame]:
    """The smallest tables on which every claim of toolgate.report.claims is testable (signals of
    registry("bm25", ["e5", "usem3"])); ``better``: the paper's side wins every comparison, else loses it."""
    s = 1 if better else -1
    features = ["top_score", "raw_margin", "norm_margin", "score_over_mean", "topk_entropy", "score_per_term"]
    gate_auc = pd.DataFrame({"signal": [*features, "g3", "g3_no_length"],
                             "auc_match": [0.8] * 6 + [0.95, 0.9], "auc_mismatch": [0.6 + 0.05 * (1 - s)] * 6
                             + [0.7 + 0.15 * (1 - s), 0.55 + 0.1 * (1 - s)]})
    boot = pd.DataFrame([{"cluster_unit": "utterance", "slice": "mismatch", "a": a, "b": b, "difference": d * s,
                          "ci_low": (d - 0.05) * s if s > 0 else -d - 0.05, "ci_high": d + 0.05 if s > 0 else -d + 0.05,
                          "excludes_zero": True, "auc_a": 0.8, "auc_b": 0.7}
                         for a, b, d in (("e5_maxcos", "g3", 0.1), ("usem3_maxcos", "g3", 0.1), ("g3", "g3_no_length", 0.1))]
                        + [{"cluster_unit": "utterance", "slice": "mismatch", "a": "e5_maxcos", "b": "usem3_maxcos",
                            "difference": 0.0 if better else 0.1, "ci_low": -0.03 if better else 0.05,
                            "ci_high": 0.03 if better else 0.15, "excludes_zero": not better, "auc_a": 0.8, "auc_b": 0.8}])
    routing = pd.DataFrame({"metric": ["delegate_to_skill", "accuracy"], "standalone_bm25_count": [40, 50],
                            "standalone_bm25_of": [50, 100], "single_pool_ladder": [0.1, 0.6],
                            "gated_count": [5 if better else 20, 60], "gated_of": [50, 100], "gated": [0.1, 0.6 + 0.1 * s],
                            "gated_minus_single_pool_ladder": [0.0, 0.1 * s],
                            "gated_minus_single_pool_ladder_ci_low": [-0.1, 0.1 * s - 0.05],
                            "gated_minus_single_pool_ladder_ci_high": [0.1, 0.1 * s + 0.05]})
    calibration = pd.DataFrame({"gate": ["g3", "g3"], "method": ["none", "platt"], "ece_all": [0.1, 0.04 if better else 0.2],
                                "auc_mismatch": [0.7, 0.7 if better else 0.65]})
    selection = pd.DataFrame({"ranker": ["bm25", "e5", "usem3"] * 2, "lang": "all", "slice": ["match"] * 3 + ["mismatch"] * 3,
                              "top1": [0.95, 0.9, 0.9, 0.5 if better else 0.8, 0.7, 0.7]})
    crossover = pd.DataFrame({"encoder": ["e5"] * 2 + ["usem3"] * 2, "k": [7, 70] * 2,
                              "crossover_p": [0.8, 0.7, 0.9, 0.6] if better else [None, None, 0.8, 0.8],
                              "note": ["BM25 better above p"] * 4, "rrf_within_spread": [True, better, None, None]})
    rerank = pd.DataFrame({"reranker": ["e5", "usem3"], "lang": "all", "slice": "all", "recovered_share": [0.3 * s, 0.6]})
    diversity = pd.DataFrame({"group": ["difference"], "mcc": [0.06 * s], "ci_low": [-0.01 if better else -0.1],
                              "ci_high": [0.14 if better else -0.02]})
    loco = pd.DataFrame([("g3", "default", "within", "default", 0.9, 0.85, 0.95),
                         ("g3", "default", "transfer", "ext", 0.7 if better else 0.88, 0.6, 0.8),
                         ("e5_maxcos", "default", "raw", "none", 0.8, 0.7 if better else 0.45, 0.9),
                         ("usem3_maxcos", "default", "raw", "none", 0.8, 0.7, 0.9)],
                        columns=["gate", "test_set", "mode", "fit_set", "auc", "ci_low", "ci_high"])
    return {"gate_auc": gate_auc, "bootstrap": boot, "routing_baselines": routing, "calibration": calibration,
            "selection": selection, "crossover": crossover, "rerank": rerank, "signal_diversity": diversity,
            "gate_loco": loco}
