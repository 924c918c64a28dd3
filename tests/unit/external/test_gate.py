"""The external gate study: every gate over each row's own candidates, within and transferred."""
import json

import numpy as np
import pandas as pd
import pytest

from toolgate.config import run as make_run
from toolgate.config import section
from toolgate.core import encoders as E
from toolgate.core.inputs import query_lengths, score_features
from toolgate.core.models import payload_scores
from toolgate.core.signals import FEATURES, fitted, registry
from toolgate.external import adapters as A
from toolgate.external import gate as XG
from toolgate.external import scoring as XS

BM25 = {"bm25": {"type": "bm25", "variant": "E1"}}


class _BagOfWords(E.Encoder):
    """A stand-in encoder: hashed bag of words, unit length."""
    backend = "bow"

    def encode_queries(self, texts):
        out = np.zeros((len(texts), 32))
        for i, t in enumerate(texts):
            for w in t.split():
                out[i, sum(map(ord, w)) % 32] += 1
        return E._normalize(out + 1e-3)

    encode_documents = encode_queries


def _calls_and_rejects():
    """FunctionChat-like: each request once with its tool among the candidates (in) and once without (out)."""
    names = ["weather", "alarm", "music", "call", "timer", "light"]
    catalog = [{"id": n, "kind": "action", "group": "external", "domain": "t", "mutating": False,
                "names": {"en": n}, "descriptions": {"en": f"{n} tool for {n} things"},
                "parameters": {"type": "object", "properties": {}, "required": []}, "keywords": {}} for n in names]
    utts, cands, clusters = [], [], []
    for i in range(24):
        tool, others = names[i % 6], [names[(i + 1) % 6], names[(i + 2) % 6]]
        text = f"please {tool} {tool} now {i}"
        for inside in (True, False):
            utts.append(A.utterance(f"r{i}-{inside}", f"r{i}", "en", text, tool if inside else None, "x"))
            cands.append(([tool] if inside else []) + others)
            clusters.append(f"r{i}")
    return A.ExternalSet("functionchat_calldecision", "en", catalog, utts, cands, clusters, ["x"] * len(utts),
                         {n: n for n in names})


def test_external_gate_fits_within_and_transfers_every_gate(monkeypatch):
    monkeypatch.setitem(E.BACKENDS, "bow", _BagOfWords)
    rankers = {"bm25": {"type": "bm25", "variant": "E0"}, "e5": {"type": "dense", "encoder": {"backend": "bow"}}}
    reg = registry("bm25", ["e5"])
    ext = _calls_and_rejects()
    fits = {s.name: {"features": list(s.inputs), "coef": [1.0] * len(s.inputs), "intercept": 0.0} for s in fitted(reg)}
    gate, run = section("gate", {"folds": 3, "resamples": 30}), make_run(0, ("en",))
    df, _, _ = XG.external_gate(rankers, "bm25", {"functionchat_calldecision": ext}, gate, run, XG.Comparisons(fits))
    assert set(df["gate"]) == set(reg)
    by = df.set_index(["gate", "mode"])["auc"]
    assert {(s.name, m) for s in fitted(reg) for m in ("within", "transfer")} <= set(by.index)
    assert ("e5_knn", "raw") in by.index and by[("top_score", "raw")] > 0.9  # removing the tool lowers BM25's best
    signals, meta = XG.gate_signals(ext, rankers, "bm25", fits, gate, run)
    # a REJECT row's exemplars are only requests for its remaining candidates, never the twin CALL row's text
    knn = signals["e5_knn"].to_numpy()
    assert (knn[1::2] < 1 - 1e-9).all() and (knn[0::2] > knn[1::2] - 1e-9).mean() > 0.5
    transfer = signals["g3_enc_transfer"].to_numpy()
    raw = XG.row_signals(ext, rankers, "bm25", [], gate, run)
    np.testing.assert_allclose(transfer, raw[list(reg["g3_enc"].inputs)].sum(axis=1))  # the fit applied unchanged
    assert meta["g3_enc_transfer"] == ("g3_enc", "transfer")


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
    df, _, _ = XG.external_gate(BM25, "bm25", {"functionchat_calldecision": fc_call}, section("gate", {"resamples": 200}), run0,
                                XG.Comparisons(fits))
    assert list(df.columns) == ["dataset", "signal", "gate", "mode", "auc", "ci_low", "ci_high", "n_in", "n_out"]
    assert set(df["dataset"]) == {"functionchat"} and (df["n_in"] == 100).all() and (df["n_out"] == 100).all()
    assert set(df["mode"]) == {"raw", "within", "transfer"}
    assert ((df["ci_low"] <= df["auc"] + 1e-12) & (df["auc"] <= df["ci_high"] + 1e-12)).all()
    by = df.set_index("signal")["auc"]
    # the transfer model here is score_per_term alone: same ranking, same AUC
    assert by["g3_transfer"] == pytest.approx(by["score_per_term"])
    assert by["top_score"] > 0.8  # removing the right tool lowers the best lexical score
