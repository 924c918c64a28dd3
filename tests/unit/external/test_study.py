"""toolgate.external: per-row candidate scoring, selection, gate signals and Jaccard."""
import json

import numpy as np
import pandas as pd
import pytest

from toolgate.config import section
from toolgate.external import adapters as A
from toolgate.external import gate as XG
from toolgate.external import scoring as XS
from toolgate.external import study as X
from toolgate.gate.inputs import query_lengths, score_features
from toolgate.gate.models import payload_scores
from toolgate.gate.signals import FEATURES

BM25 = {"bm25": {"type": "bm25", "variant": "E1"}}


def _tool(i, name, desc):
    return {"id": i, "kind": "action", "group": "external", "domain": "t", "mutating": False,
            "names": {"en": name}, "descriptions": {"en": desc},
            "parameters": {"type": "object", "properties": {}, "required": []}, "keywords": {}}


def _tiny():
    catalog = [_tool("alpha", "weather", "get the weather forecast"),
               _tool("beta", "weather", "get the weather forecast"),  # same text as alpha: always tied
               _tool("gamma", "alarm", "set an alarm clock")]
    texts = ["weather forecast please", "weather forecast please", "set an alarm", "tell me a joke"]
    golds = ["alpha", "beta", "gamma", None]
    cands = [["alpha", "beta", "gamma"], ["beta", "alpha"], ["alpha", "gamma"], ["gamma"]]
    utts = [A._utt(f"t{i}", f"t{i}", "en", t, g, "tiny") for i, (t, g) in enumerate(zip(texts, golds))]
    return A.ExternalSet("bfcl", "en", catalog, utts, cands, [f"t{i}" for i in range(4)],
                         ["multiple", "multiple", "multiple", "irrelevance"], {t["id"]: t["id"] for t in catalog})


def test_row_scores_use_own_candidates_and_ties_keep_candidate_order(run0):
    ext = _tiny()
    scores = XS.row_scores(ext, BM25["bm25"], run0)
    assert [len(s) for s in scores] == [3, 2, 2, 1]
    assert scores[0][0] == scores[0][1] > scores[0][2]  # alpha and beta tie
    assert scores[1][0] == scores[0][1] and scores[1][1] == scores[0][0]  # columns follow the row's order
    assert XS.top1(scores, ext.candidates) == ["alpha", "beta", "gamma", "gamma"]
    sel = X.external_selection(BM25, {"bfcl": ext}, run0)
    row = sel.iloc[0]
    assert (row["dataset"], row["condition"], row["n"]) == ("bfcl", "multiple", 3) and row["top1"] == 1.0
    assert row["chance"] == pytest.approx(np.mean([1 / 3, 1 / 2, 1 / 2]))


def test_score_features_over_padded_rows_cap_k_and_pad_single_candidates():
    scores = [np.array([3.0]), np.array([4.0, 1.0]), np.array([0.0])]
    f = score_features(XS.padded(scores), query_lengths(["a b", "c d", "e"], section("text")), 5)
    assert f.loc[0, "raw_margin"] == 3 and f.loc[0, "norm_margin"] == 1 and f.loc[0, "score_over_mean"] == 1
    assert f.loc[0, "topk_entropy"] == 0
    assert f.loc[1, "score_over_mean"] == pytest.approx(4 / 2.5)  # k = 2 candidates, not 5
    assert f.loc[2, "norm_margin"] == 0 and not f.isna().any().any()


def test_transfer_payload_is_applied_unchanged():
    feats = pd.DataFrame({"top_score": [1.0, 2.0], "length": [3.0, 4.0]})
    payload = {"features": ["top_score", "length"], "coef": [2.0, -1.0], "intercept": 0.5}
    np.testing.assert_allclose(payload_scores(payload, feats), [-0.5, 0.5])


def test_external_gate_on_functionchat_with_bm25(fc_call, run0, tmp_path):
    fits = tmp_path / "gates.json"
    fits.write_text(json.dumps({"g3": {"features": list(FEATURES), "coef": [0, 0, 0, 0, 0, 1, 0], "intercept": -1}}))
    df, _ = XG.external_gate(BM25, "bm25", fits, {"functionchat_calldecision": fc_call}, section("gate", {"resamples": 200}), run0)
    assert list(df.columns) == ["dataset", "signal", "gate", "mode", "auc", "ci_low", "ci_high", "n_in", "n_out"]
    assert set(df["dataset"]) == {"functionchat"} and (df["n_in"] == 100).all() and (df["n_out"] == 100).all()
    assert set(df["mode"]) == {"raw", "within", "transfer"}
    assert ((df["ci_low"] <= df["auc"] + 1e-12) & (df["auc"] <= df["ci_high"] + 1e-12)).all()
    by = df.set_index("signal")["auc"]
    # the transfer model here is score_per_term alone: same ranking, same AUC
    assert by["g3_transfer"] == pytest.approx(by["score_per_term"])
    assert by["top_score"] > 0.8  # removing the right tool lowers the best lexical score


def test_selection_and_jaccard_on_mirror(fc_single, run0):
    sets = {"functionchat_singlecall": fc_single}
    sel = X.external_selection(BM25, sets, run0)
    assert list(sel["condition"]) == list(A.SINGLECALL_CONDITIONS) and (sel["n"] == 100).all()
    assert sel.set_index("condition").loc["exact", "top1"] == 1.0
    summary, items = X.jaccard_external(sets, 3)
    assert len(items) == 100 and summary.iloc[0]["n"] == 100 and summary.iloc[0]["lang"] == "ko"
    assert 0 <= summary.iloc[0]["q1"] <= summary.iloc[0]["median"] <= summary.iloc[0]["q3"] <= 1
