"""Scoring an external set: each row over its own candidates."""

import numpy as np
import pytest

from toolgate.external import adapters as A
from toolgate.external import scoring as XS
from toolgate.external import study as X

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
    utts = [A.utterance(f"t{i}", f"t{i}", "en", t, g, "tiny") for i, (t, g) in enumerate(zip(texts, golds))]
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
