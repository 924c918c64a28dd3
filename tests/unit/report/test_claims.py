"""Claims ledger: verdicts on small tables, and "not testable" with a readable reason when inputs are missing."""
import re

import pandas as pd
import pytest

from report_fixtures import ROLES
from toolgate.core.signals import registry
from toolgate.gate.bootstrap import NO_SLICE
from toolgate.report.claims import CLAIMS, Missing, _reason, ledger

SIGNALS = registry("bm25", ["e5", "usem3"])


def test_ledger_marks_missing_tables_not_testable():
    led = ledger({}, SIGNALS, ROLES)
    assert set(led["verdict"]) == {"not testable"} and len(led) >= 11


def _gate_auc(mismatch_aucs):
    names = ["top_score", "raw_margin", "norm_margin", "score_over_mean", "topk_entropy", "score_per_term"]
    return pd.DataFrame({"signal": names, "kind": ["BM25 score feature (raw)"] * 6, "auc_mismatch": mismatch_aucs})


def _verdict(tables, name, column="evidence"):
    led = ledger(tables, SIGNALS, ROLES).set_index("claim")
    text = next(t for t, _, test in CLAIMS if test.__name__ == name)
    return led.loc[text, "verdict"], led.loc[text, column]


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


def test_the_two_routing_claims_are_tested_apart():
    t = {"routing_baselines": _routing(0.72, (-0.03, 0.07))}
    verdict, evidence = _verdict(t, "gated_not_below_ladder")
    assert verdict == "holds" and evidence == "accuracy gated 0.720 vs ladder 0.700: +0.020 [-0.030, 0.070]"
    assert _verdict(t, "gated_not_below_ladder", "deciding")[1] == ("gated - ladder +0.020 [-0.030, 0.070]: upper "
                                                                    "end >= 0")
    assert _verdict(t, "gate_cuts_errors") == ("holds", "40/50 -> 5/50 (8.0x)")
    assert _verdict(t, "gate_cuts_errors", "deciding")[1] == "40 -> 5 errors: 8.0x >= 3"
    # fewer delegate-to-skill errors, but routing worse than the ladder: the sentence about errors still holds, the
    # one about accuracy fails; neither verdict hides in the other's test
    t = {"routing_baselines": _routing(0.55, (-0.25, -0.05))}
    verdict, deciding = _verdict(t, "gated_not_below_ladder", "deciding")
    assert verdict == "does not hold" and deciding == "gated - ladder -0.150 [-0.250, -0.050]: upper end < 0"
    assert _verdict(t, "gate_cuts_errors")[0] == "holds"
    delegations = pd.DataFrame({"metric": ["delegations"], "gated_count": [272], "gated_of": [600]})
    with_rate = {"routing_baselines": pd.concat([t["routing_baselines"], delegations], ignore_index=True)}
    assert _verdict(with_rate, "gate_cuts_errors")[1] == "40/50 -> 5/50 (8.0x); it delegates 272 of 600 requests"
    t["routing_baselines"].loc[0, "gated_count"] = 20  # 40 -> 20: twice, not several-fold
    assert _verdict(t, "gate_cuts_errors", "deciding") == ("does not hold", "40 -> 20 errors: 2.0x < 3")
    t["routing_baselines"] = t["routing_baselines"].drop(columns="gated_minus_single_pool_ladder_ci_high")
    assert _verdict(t, "gate_cuts_errors")[0] == "does not hold"
    assert _verdict(t, "gated_not_below_ladder") == (
        "not testable", "routing_baselines.csv has no column gated_minus_single_pool_ladder_ci_high")


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


def _crossover(e5_p, usem3_p):
    """crossover.csv's rows: e5 and usem3 at k = 7, 20, 70 (None: no crossover in [0,1] at that k)."""
    rows = [{"encoder": enc, "k": k, "crossover_p": p,
             "note": "no crossover in [0,1]" if p is None else "BM25 better above p"}
            for enc, ps in (("e5", e5_p), ("usem3", usem3_p)) for k, p in zip((7, 20, 70), ps)]
    return {"crossover": pd.DataFrame(rows)}


def test_a_crossover_that_exists_at_no_k_cannot_move():
    # issue 40: "holds" was printed beside "e5: k=7: none, ... k=70: none", carried by the other encoder alone
    verdict, deciding = _verdict(_crossover([None] * 3, [0.85, 0.49, 0.5]), "crossover_moves", "deciding")
    assert verdict == "does not hold"
    assert deciding == "e5: no crossover at any k (0 of 3 < 1); usem3: span 0.360 >= 0.05"
    assert "e5: k=7: none, k=20: none, k=70: none" in _verdict(_crossover([None] * 3, [0.85, 0.49, 0.5]),
                                                                "crossover_moves")[1]
    assert _verdict(_crossover([0.8, 0.76, 0.72], [0.85, 0.49, 0.5]), "crossover_moves")[0] == "holds"
    # present at one k and absent at another moves too; a flat one does not
    verdict, deciding = _verdict(_crossover([0.8, None, 0.8], [0.85, 0.49, 0.5]), "crossover_moves", "deciding")
    assert verdict == "holds" and deciding.startswith("e5: span 0.000 < 0.05, none at 1 of 3 k")
    assert _verdict(_crossover([0.8, 0.81, 0.8], [0.85, 0.49, 0.5]), "crossover_moves")[0] == "does not hold"


def test_every_claim_states_a_threshold_in_its_test():
    for text, test, _ in CLAIMS:
        assert ":" in test and re.search(r"(>=|<=|<|>|=) ?([-+]?\d|all)", test), (text, test)


def _loco(rows):
    cols = ["gate", "test_set", "mode", "fit_set", "auc", "ci_low", "ci_high"]
    return {"gate_loco": pd.DataFrame(rows, columns=cols)}


def test_the_bm25_gate_transfer_claim_is_decided_by_the_smallest_loss():
    lost = _loco([("g3", "a", "within", "a", 0.90, 0.85, 0.95), ("g3", "a", "transfer", "b", 0.60, 0.5, 0.7),
                  ("g3", "a", "transfer", "c", 0.80, 0.7, 0.9)])
    assert _verdict(lost, "bm25_gate_does_not_transfer", "deciding") == (
        "holds", "fitted on c 0.800 [0.700, 0.900] vs 0.900 within: loss +0.100 > 0.05")
    kept = _loco([("g3", "a", "within", "a", 0.90, 0.85, 0.95), ("g3", "a", "transfer", "b", 0.87, 0.8, 0.9)])
    assert _verdict(kept, "bm25_gate_does_not_transfer")[0] == "does not hold"
    alone = _loco([("g3", "a", "within", "a", 0.90, 0.85, 0.95)])
    assert _verdict(alone, "bm25_gate_does_not_transfer") == (
        "not testable", "gate_loco.csv has no G3 transferred to this set from another (one set, or the external "
                        "study off)")


def test_the_encoder_transfer_claim_needs_every_encoder_above_chance():
    both = [("e5_maxcos", "a", "raw", "none", 0.80, 0.70, 0.90), ("usem3_maxcos", "a", "raw", "none", 0.60, 0.52, 0.68)]
    assert _verdict(_loco(both), "encoder_similarity_transfers", "deciding") == (
        "holds", "usem3_maxcos 0.600 [0.520, 0.680]: lower end > 0.5")
    weak = both[:1] + [("usem3_maxcos", "a", "raw", "none", 0.55, 0.45, 0.65)]
    assert _verdict(_loco(weak), "encoder_similarity_transfers")[0] == "does not hold"


def test_the_thesis_sentence_says_within_and_on_which_sets_across():
    from toolgate.report.sets import ACROSS_CLAIMS, WITHIN_CLAIM, thesis_sentence
    rows = [(WITHIN_CLAIM, "own", "holds", "x"), (ACROSS_CLAIMS[0], "own", "holds", "y"),
            (ACROSS_CLAIMS[1], "own", "holds", "z"), (ACROSS_CLAIMS[0], "ext", "does not hold", "w"),
            (ACROSS_CLAIMS[1], "ext", "holds", "v"), (ACROSS_CLAIMS[0], "one", "not testable", "")]
    m = pd.DataFrame(rows, columns=["claim", "set", "verdict", "deciding"])
    assert thesis_sentence(m, "own") == (
        "The paper's case for spending the encoder on abstention holds within this catalog (x); carried across "
        "catalogs, which the paper does not test (a BM25-score gate loses its separation, an encoder's similarity "
        "keeps it), it holds on 1 of the 2 sets that test both transfer claims (own) and not on ext.")
    m.loc[0, "verdict"] = "does not hold"
    m.loc[3, "verdict"] = "holds"
    assert "does not hold within this catalog (x)" in thesis_sentence(m, "own")
    assert thesis_sentence(m, "own").endswith("it holds on 2 of the 2 sets that test both transfer claims (own, ext).")
