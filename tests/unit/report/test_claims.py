"""Claims ledger: verdicts on small tables, and "not testable" with a readable reason when inputs are missing."""
import pandas as pd
import pytest

from report_fixtures import ROLES
from toolgate.gate.bootstrap import NO_SLICE
from toolgate.gate.signals import registry
from toolgate.report.claims import CLAIMS, Missing, _reason, ledger

SIGNALS = registry("bm25", ["e5", "usem3"])


def test_ledger_marks_missing_tables_not_testable():
    led = ledger({}, SIGNALS, ROLES)
    assert set(led["verdict"]) == {"not testable"} and len(led) >= 11


def _gate_auc(mismatch_aucs):
    names = ["top_score", "raw_margin", "norm_margin", "score_over_mean", "topk_entropy", "score_per_term"]
    return pd.DataFrame({"signal": names, "kind": ["BM25 score feature (raw)"] * 6, "auc_mismatch": mismatch_aucs})


def _verdict(tables, name):
    led = ledger(tables, SIGNALS, ROLES).set_index("claim")
    text = next(t for t, _, test in CLAIMS if test.__name__ == name)
    return led.loc[text, "verdict"], led.loc[text, "evidence"]


def test_feature_claim_reads_the_registry_not_display_text():
    t = {"gate_auc": _gate_auc([0.5, 0.55, 0.6, 0.61, 0.62, 0.65])}
    assert _verdict(t, "features_below")[0] == "holds"
    t["gate_auc"].loc[2, "auc_mismatch"] = 0.71
    verdict, evidence = _verdict(t, "features_below")
    assert verdict == "does not hold" and "norm_margin" in evidence
    t["gate_auc"]["kind"] = "renamed label"  # the display text plays no part
    assert _verdict(t, "features_below")[0] == "does not hold"


def test_encoder_claims_use_the_registry_and_roles():
    boot = pd.DataFrame({"cluster_unit": ["utterance"] * 3, "slice": ["mismatch"] * 3,
                         "a": ["e5_maxcos", "usem3_maxcos", "e5_maxcos"], "b": ["g3", "g3", "usem3_maxcos"],
                         "difference": [0.1, 0.2, -0.05], "ci_low": [0.02, -0.01, -0.1], "ci_high": [0.2, 0.3, 0.01],
                         "excludes_zero": [True, False, False]})
    assert _verdict({"bootstrap": boot}, "encoders_beat_g3")[0] == "does not hold"
    assert _verdict({"bootstrap": boot}, "encoders_not_separated")[0] == "holds"
    sel = pd.DataFrame({"ranker": ["bm25", "bm25", "e5", "e5"], "lang": ["all"] * 4,
                        "slice": ["match", "mismatch"] * 2, "top1": [0.98, 0.2, 0.9, 0.4]})
    assert _verdict({"selection": sel}, "bm25_match_vs_paraphrase")[0] == "holds"
    sel.loc[sel["ranker"] == "bm25", "ranker"] = "lexical_other"  # not the configured lexical ranker
    assert _verdict({"selection": sel}, "bm25_match_vs_paraphrase")[0] == "not testable"


def test_missing_inputs_give_a_readable_reason():
    led = ledger({}, SIGNALS, ROLES)
    assert led["evidence"].str.fullmatch(r"table \w+\.csv was not produced").all()
    sel = pd.DataFrame({"ranker": ["bm25", "e5"], "lang": ["all"] * 2, "slice": ["all"] * 2, "top1": [0.6, 0.7]})
    verdict, evidence = _verdict({"selection": sel}, "bm25_match_vs_paraphrase")
    assert verdict == "not testable"
    assert evidence == ("selection.csv has no match or mismatch slice rows (lang=all): this catalog has no "
                        "vocabulary split")
    # a failure no test foresaw is still named in words, not printed as a bare repr such as 'match'
    assert _reason(KeyError("match")) == "the tables do not have the shape this test reads (KeyError: match)"
    assert _reason(Missing("calibration.csv has no column ece_all")) == "calibration.csv has no column ece_all"


def _bootstrap(slice_label):
    return pd.DataFrame({"cluster_unit": ["utterance"] * 3 + ["pair"], "slice": [slice_label] * 4,
                         "a": ["e5_maxcos", "usem3_maxcos", "e5_maxcos", "e5_maxcos"],
                         "b": ["g3", "g3", "usem3_maxcos", "g3"], "difference": [0.1, 0.2, -0.05, 0.1],
                         "ci_low": [0.02, 0.01, -0.1, -0.3], "ci_high": [0.2, 0.3, 0.01, 0.4]})


@pytest.mark.parametrize("label, words", [("mismatch", "on mismatch-in vs out: "),
                                          (NO_SLICE, "on all in vs out (no mismatch slice): ")])
def test_encoder_claims_name_the_slice_they_used(label, words):
    t = {"bootstrap": _bootstrap(label)}
    verdict, evidence = _verdict(t, "encoders_beat_g3")
    assert verdict == "holds" and evidence.startswith(words) and "usem3_maxcos - G3 +0.200" in evidence
    t["bootstrap"].loc[1, "ci_low"] = -0.01  # one encoder's interval reaches 0
    assert _verdict(t, "encoders_beat_g3")[0] == "does not hold"
    verdict, evidence = _verdict(t, "encoders_not_separated")
    assert verdict == "holds" and evidence == words + "e5_maxcos - usem3_maxcos -0.050 [-0.100, 0.010]"
    t["bootstrap"].loc[2, "ci_high"] = -0.01
    assert _verdict(t, "encoders_not_separated")[0] == "does not hold"
    t["bootstrap"]["slice"] = "some other slice"
    verdict, evidence = _verdict(t, "encoders_beat_g3")
    assert verdict == "not testable" and evidence.startswith("bootstrap.csv has no utterance-cluster")


def _routing(gated_accuracy, ci):
    """routing_baselines.csv's two rows the routing claims read."""
    return pd.DataFrame({"metric": ["delegate_to_skill", "accuracy"],
                         "standalone_bm25_count": [40, 50], "standalone_bm25_of": [50, 100],
                         "single_pool_ladder": [0.1, 0.70], "gated_count": [5, int(gated_accuracy * 100)],
                         "gated_of": [50, 100], "gated": [0.1, gated_accuracy],
                         "gated_minus_single_pool_ladder": [0.0, gated_accuracy - 0.70],
                         "gated_minus_single_pool_ladder_ci_low": [-0.1, ci[0]],
                         "gated_minus_single_pool_ladder_ci_high": [0.1, ci[1]]})


def test_routing_guard_and_the_claim_it_pairs_with():
    t = {"routing_baselines": _routing(0.72, (-0.03, 0.07))}
    verdict, evidence = _verdict(t, "gated_not_below_ladder")
    assert verdict == "holds" and evidence == "accuracy gated 0.720 vs ladder 0.700: +0.020 [-0.030, 0.070]"
    verdict, evidence = _verdict(t, "gate_cuts_errors")
    assert verdict == "holds" and evidence == "40/50 -> 5/50 (8.0x); " + "accuracy gated 0.720 vs ladder 0.700: " \
        "+0.020 [-0.030, 0.070]"
    # fewer delegate-to-skill errors, but bought by routing worse than the ladder: both claims fail
    t = {"routing_baselines": _routing(0.55, (-0.25, -0.05))}
    assert _verdict(t, "gated_not_below_ladder")[0] == "does not hold"
    verdict, evidence = _verdict(t, "gate_cuts_errors")
    assert verdict == "does not hold" and evidence.endswith("-0.150 [-0.250, -0.050] (the ladder guard fails)")
    t["routing_baselines"] = t["routing_baselines"].drop(columns="gated_minus_single_pool_ladder_ci_high")
    verdict, evidence = _verdict(t, "gate_cuts_errors")
    assert (verdict, evidence) == ("not testable",
                                   "routing_baselines.csv has no column gated_minus_single_pool_ladder_ci_high")


def test_hybrid_claim_needs_every_k_within_spread():
    cross = pd.DataFrame({"encoder": ["e5", "e5", "usem3"], "k": [7, 70, 7],
                          "rrf_within_spread": [True, False, None]})
    verdict, evidence = _verdict({"crossover": cross}, "hybrid_removes_choice")
    assert verdict == "does not hold" and "within at k = 7 of 7, 70" in evidence
    cross.loc[1, "rrf_within_spread"] = True
    assert _verdict({"crossover": cross}, "hybrid_removes_choice")[0] == "holds"
    verdict, evidence = _verdict({"crossover": cross.drop(columns="rrf_within_spread")}, "hybrid_removes_choice")
    assert verdict == "not testable" and "no hybrid columns" in evidence
    cross["rrf_within_spread"] = None  # no match/mismatch split: the columns exist, empty
    verdict, evidence = _verdict({"crossover": cross}, "hybrid_removes_choice")
    assert verdict == "not testable" and "no hybrid values" in evidence


def test_bm25_claim_compares_with_encoders_not_hybrids():
    sel = pd.DataFrame({"ranker": ["bm25", "e5", "usem3", "rrf"] * 2, "lang": "all",
                        "slice": ["match"] * 4 + ["mismatch"] * 4, "top1": [0.9, 0.8, 0.8, 0.95, 0.3, 0.5, 0.5, 0.6]})
    verdict, evidence = _verdict({"selection": sel}, "bm25_match_vs_paraphrase")
    assert verdict == "holds" and "rrf" not in evidence
