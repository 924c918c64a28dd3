"""The claims-by-set matrix: external sets as the claims read them, both verdicts of one claim side by side,
reasons for what a set cannot test, compared experiments, and the report's HTML (contents, verdict cells, no
machine paths)."""
import re

import pandas as pd
import yaml

from report_fixtures import ROLES, claim_tables
from toolgate.gate.bootstrap import NO_SLICE
from toolgate.gate.signals import registry
from toolgate.report.build import no_paths, to_html
from toolgate.report.sets import (
    EXTERNAL_ONLY,
    claims_matrix,
    compared_inputs,
    external_sets,
    family_sentences,
    footnote_lines,
    matrix_table,
)

SIGNALS = registry("bm25", ["e5", "usem3"])
CENTRAL = "Each encoder gate beats G3 on mismatch-in vs out"


def _boot(unit, slice_, diffs, dataset=None):
    rows = [{"cluster_unit": unit, "slice": slice_, "a": a, "b": b, "difference": d, "ci_low": lo, "ci_high": hi,
             "excludes_zero": lo > 0 or hi < 0} for a, b, d, lo, hi in diffs]
    df = pd.DataFrame(rows)
    return df if dataset is None else df.assign(dataset=dataset)


def _tables():
    """The own set: encoders lose to G3 on mismatch. FunctionChat: they win; BFCL: one of them does not."""
    own = _boot("utterance", "mismatch", [("e5_maxcos", "g3", -0.3, -0.35, -0.25), ("usem3_maxcos", "g3", -0.2, -0.3, -0.1),
                                          ("e5_maxcos", "usem3_maxcos", -0.1, -0.2, 0.01)])
    ext = pd.concat([
        _boot("cluster", NO_SLICE, [("e5_maxcos", "g3", 0.02, 0.01, 0.04), ("usem3_maxcos", "g3", 0.03, 0.01, 0.05),
                                    ("e5_maxcos", "usem3_maxcos", -0.01, -0.03, 0.01)], "functionchat"),
        _boot("cluster", NO_SLICE, [("e5_maxcos", "g3", -0.08, -0.1, -0.05), ("usem3_maxcos", "g3", 0.05, -0.01, 0.1),
                                    ("e5_maxcos", "usem3_maxcos", -0.1, -0.2, -0.05)], "bfcl")])
    gate = pd.DataFrame({"dataset": ["functionchat", "bfcl"], "signal": ["g3", "g3"], "gate": ["g3", "g3"],
                         "mode": ["within", "within"], "auc": [0.95, 0.9], "ci_low": [0.9, 0.85], "ci_high": [1, 0.95],
                         "n_in": [100, 50], "n_out": [100, 50]})
    sel = pd.DataFrame({"dataset": ["functionchat"] * 2, "condition": ["exact", "4_close"], "ranker": ["bm25"] * 2,
                        "n": [100, 100], "top1": [1.0, 0.8], "mean_candidates": [1, 4], "chance": [1, 0.25]})
    return {"bootstrap": own, "external_bootstrap": ext, "external_gate": gate, "external_selection": sel}


def test_external_sets_are_shaped_as_the_claims_read_them():
    sets = external_sets(_tables())
    assert list(sets) == ["functionchat_calldecision", "bfcl", "functionchat_singlecall"]
    assert set(sets["bfcl"]["bootstrap"]["cluster_unit"]) == {"cluster"} and "dataset" not in sets["bfcl"]["bootstrap"]
    assert list(sets["functionchat_singlecall"]["selection"]["slice"]) == ["exact", "4_close"]
    assert external_sets({}) == {}


def test_one_claim_shows_both_verdicts_across_sets():
    m = claims_matrix("default", _tables(), SIGNALS, ROLES)
    central = m[m["claim"] == CENTRAL].set_index("set")["verdict"]
    assert central["default"] == "does not hold"
    assert central["functionchat_calldecision (external)"] == "holds"
    assert central["bfcl (external)"] == "does not hold"
    assert central["functionchat_singlecall (external)"] == "not testable"
    ev = m[(m["claim"] == CENTRAL) & (m["set"] == "functionchat_calldecision (external)")]["evidence"].iloc[0]
    assert ev.startswith(f"on {NO_SLICE}") and "+0.020 [0.010, 0.040]" in ev


def test_what_a_set_cannot_test_says_why():
    m = claims_matrix("default", _tables(), SIGNALS, ROLES).set_index(["claim", "set"])
    routing = m.loc[("The gated router is at least as accurate as the single-pool ladder", "bfcl (external)"), "evidence"]
    assert routing == EXTERNAL_ONLY
    sel = m.loc[("BM25 beats the encoders on matched vocabulary and loses on paraphrase",
                 "functionchat_singlecall (external)"), "evidence"]
    assert "no vocabulary split" in sel


def test_matrix_table_and_family_sentences():
    m = claims_matrix("default", _tables(), SIGNALS, ROLES)
    wide = matrix_table(m)
    assert list(wide.columns)[:4] == ["claim", "test", "default", "functionchat_calldecision (external)"]
    assert wide.set_index("claim").loc[CENTRAL, "default"] == "✗ e5_maxcos - G3 -0.300 [-0.350, -0.250]: lower end <= 0"
    assert wide.set_index("claim").loc[CENTRAL, "test"].startswith("beats: every encoder - G3 AUC interval has lower "
                                                                   "end > 0")
    sentences = family_sentences(m)
    abst = next(s for s in sentences if s.startswith("Abstention"))
    assert "2 of 2 on functionchat_calldecision (external)" in abst and "0 of 2 on bfcl (external)" in abst
    assert any(s.startswith("Routing") and "no set can test them" in s for s in sentences)


def test_a_compared_experiment_is_read_from_its_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "other.yaml").write_text(yaml.safe_dump({"experiment": "other"}))
    m = claims_matrix("default", {}, SIGNALS, ROLES, ["other.yaml"])
    assert (m[m["set"] == "other"]["evidence"] == "not run yet: snakemake --configfile other.yaml --cores 2, then "
                                                 "rerun this report").all()
    assert compared_inputs(["other.yaml"]) == ["other.yaml"]  # the report rule's inputs: the config alone
    tables = tmp_path / "results" / "other" / "tables"
    tables.mkdir(parents=True)
    _tables()["bootstrap"].to_csv(tables / "bootstrap.csv", index=False)
    # once it has run, its tables are inputs too, so a rerun of that experiment reruns this report
    assert compared_inputs(["other.yaml"]) == ["other.yaml", "results/other/tables/bootstrap.csv"]
    m = claims_matrix("default", {}, SIGNALS, ROLES, ["other.yaml"])
    assert m[(m["set"] == "other") & (m["claim"] == CENTRAL)]["verdict"].iloc[0] == "does not hold"


def test_html_has_contents_marked_verdicts_and_no_machine_paths():
    matrix = matrix_table(claims_matrix("default", _tables(), SIGNALS, ROLES))
    page = to_html([("h", 1, "t"), ("toc",), ("h", 2, "Claims by data set"), ("verdicts", matrix),
                    ("p", "not run: /usr/local/lib/python3.11/bin/server failed"), ("h", 2, "Figures")], "t")
    assert "<a href='#claims-by-data-set'>" in page and "id='figures'" in page and "id=claims-matrix" in page
    assert "<td class='holds'>" in page and "<td class='fails'>" in page and "<td class='untested'>" in page
    assert "/usr/local" not in page and "not run: server failed" in page
    assert no_paths("see http://127.0.0.1:8000/v1/models and tables/x.csv") == "see http://127.0.0.1:8000/v1/models and tables/x.csv"


THRESHOLD = re.compile(r"(>=|<=|<|>|=) ?([-+]?\d|all)")
NUMBER = re.compile(r"[-+]?\d+\.\d+|\d+x|\d+ of \d+")


def test_every_testable_cell_shows_its_mark_a_number_and_the_threshold():
    """Issue 40's "done when": a threshold and a number in every testable cell, whichever way the verdict goes."""
    for better in (True, False):
        m = claims_matrix("default", {**claim_tables(better), **{k: v for k, v in _tables().items() if k != "bootstrap"}},
                          SIGNALS, ROLES)
        own = m[m["set"] == "default"]
        assert (own["verdict"] == ("holds" if better else "does not hold")).all(), own[["claim", "verdict", "evidence"]]
        wide = matrix_table(m)
        notes = footnote_lines(m)
        for col in wide.columns[2:]:
            for claim, text in zip(wide["claim"], wide[col]):
                if text.startswith("not testable"):
                    n = int(re.fullmatch(r"not testable \[(\d+)\]", text).group(1))
                    assert notes[n - 1].startswith(f"[{n}] "), (claim, col, text)
                else:
                    assert text[0] == ("✓" if text.startswith("✓") else "✗") and text[1] == " ", (claim, col, text)
                    assert NUMBER.search(text) and THRESHOLD.search(text), (claim, col, text)


def test_not_testable_reasons_are_one_footnote_each():
    m = claims_matrix("default", _tables(), SIGNALS, ROLES)
    notes = footnote_lines(m)
    untested = m[m["verdict"] == "not testable"]
    assert len(notes) == untested["evidence"].nunique() < len(untested)
    assert f"{EXTERNAL_ONLY} (functionchat_calldecision (external), bfcl (external), functionchat_singlecall " \
           "(external))." in [n.split(" ", 1)[1] for n in notes]  # one note for every table the external study lacks
    cells = matrix_table(m).iloc[:, 2:].to_numpy().ravel()
    assert {c for c in cells if c.startswith("not testable")} == {f"not testable [{i + 1}]" for i in range(len(notes))}
