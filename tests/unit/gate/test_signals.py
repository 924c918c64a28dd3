"""The signal registry and the typed rule parameters built on it."""

import pandas as pd
import pytest

from toolgate.core.signals import (
    FEATURES,
    compared_gates,
    fitted,
    gate_signal,
    of_kind,
    registry,
    signal_rows,
    studied_gates,
)
from toolgate.experiment import typed


def test_registry_order_kinds_and_scales():
    reg = registry("bm25", ["e5", "usem3"])
    assert list(reg)[:7] == ["top_score", "raw_margin", "norm_margin", "score_over_mean", "topk_entropy",
                             "score_per_term", "length"]
    assert list(reg)[7:12] == ["length_fitted", "g3", "g3_no_length", "e5_maxcos", "usem3_maxcos"]
    assert of_kind(reg, "encoder") == ["e5_maxcos", "usem3_maxcos"] and len(of_kind(reg, "score_feature")) == 6
    assert reg["g3"].log_odds and reg["length_fitted"].log_odds and not reg["e5_maxcos"].log_odds
    assert reg["e5_maxcos"].ranker == "e5" and reg["top_score"].ranker == "bm25"
    assert studied_gates(reg) == ["g3", "length_fitted", "e5_maxcos", "usem3_maxcos"]


def test_a_config_gate_resolves_by_ranker_or_name():
    reg = registry("bm25", ["e5"])
    assert gate_signal(reg, "e5").name == "e5_maxcos" and gate_signal(reg, "g3").name == "g3"
    with pytest.raises(KeyError, match="no gate signal for 'bge'"):
        gate_signal(reg, "bge")


def test_signal_rows_follow_the_utterance_order():
    sig = pd.DataFrame({"utterance_id": ["a", "b", "c"], "g3": [1.0, 2.0, 3.0]})
    assert signal_rows(sig, [{"utterance_id": u} for u in "cab"])["g3"].tolist() == [3.0, 1.0, 2.0]


def test_typed_params_become_sections_run_and_registry():
    p = typed({"run": {"seed": 3, "langs": ["en"], "text": {"ngram": 2}, "cache": "c"}, "gate": {"folds": 3},
               "signals": {"lexical": "bm25", "encoders": ["e5"]}, "top_k": 5})
    assert (p.run.seed, p.run.langs, p.run.text.ngram, p.run.text.pad, p.run.cache) == (3, ("en",), 2, True, "c")
    assert p.gate.folds == 3 and p.gate.resamples == 2000  # the schema's default
    assert "e5_maxcos" in p.signals and p.top_k == 5


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


def test_a_gate_reads_the_encoders_of_its_inputs():
    from toolgate.core.signals import gate_encoders, gate_inputs, registry

    reg = registry("bm25", ["e5", "usem3"])
    assert gate_encoders(reg, "g3") == [] and gate_encoders(reg, "length_fitted") == []
    assert gate_encoders(reg, "usem3_knn_catalog") == ["usem3"] and gate_encoders(reg, "g3_enc") == ["e5", "usem3"]
    assert [s.name for s in gate_inputs(reg, "usem3_knn_catalog")] == ["usem3_maxcos", "usem3_knn"]
    assert [s.name for s in gate_inputs(reg, "rank_agreement")] == ["e5_agrees", "e5_bm25_rr", "usem3_agrees",
                                                                   "usem3_bm25_rr"]
