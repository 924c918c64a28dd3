"""The claims-by-set matrix: external sets as the claims read them, both verdicts of one claim side by side,
reasons for what a set cannot test, compared experiments, and the report's HTML (contents, verdict cells, no
machine paths)."""
import re

import numpy as np
import pandas as pd
import yaml

from report_fixtures import ROLES, claim_tables
from toolgate.core.signals import registry
from toolgate.gate.bootstrap import NO_SLICE
from toolgate.report.render import no_paths, to_html
from toolgate.report.sets import (
    EXTERNAL_ONLY,
    claims_matrix,
    compared_inputs,
    external_sets,
    footnote_lines,
    matrix_table,
    verdict_count,
    verdict_table,
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


def test_matrix_table_and_verdict_table():
    m = claims_matrix("default", _tables(), SIGNALS, ROLES)
    wide = matrix_table(m)
    assert list(wide.columns)[:4] == ["claim", "test", "default", "functionchat_calldecision (external)"]
    assert wide.set_index("claim").loc[CENTRAL, "default"] == "✗ e5_maxcos - G3 -0.300 [-0.350, -0.250]: lower end <= 0"
    assert wide.set_index("claim").loc[CENTRAL, "test"].startswith("beats: every encoder - G3 AUC interval has lower "
                                                                   "end > 0")
    verdicts = verdict_table(m).set_index("claims")
    assert verdicts.loc["abstention (within a catalog, 6)", "functionchat_calldecision (external)"] == "2 of 2 hold"
    assert verdicts.loc["abstention (within a catalog, 6)", "bfcl (external)"] == "0 of 2 hold"
    assert (verdicts.loc["routing (within a catalog, 3)"].drop("default") == "not testable").all()


def test_the_verb_follows_the_count():
    assert [verdict_count(n, v) for n in (1, 9) for v in ("holds", "does not hold")] == [
        "1 holds", "1 does not hold", "9 hold", "9 do not hold"]


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
    page = to_html([("h", 1, "t"), ("toc",), ("h", 2, "Claims by data set"), ("table", matrix, "verdicts"),
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


def _across(text: str) -> tuple[list[str], list[str]]:
    """The sets the thesis sentence says hold across catalogs, and those it says do not (set names hold no commas)."""
    held, _, failed = text.split("transfer claims", 1)[1].rstrip(".").partition(" and not on ")
    held = held.strip()
    names = (lambda part: [s for s in part.split(", ") if s])
    return names(held[1:-1] if held.startswith("(") else ""), names(failed)


def test_computed_sentences_read_the_same_cells_as_the_matrix():
    """The thesis sentence, the opening table and the own-set count agree with the matrix whatever its verdicts:
    every set the thesis says holds across catalogs holds both transfer claims, every set it names as not holding
    fails one, and each table cell counts the matrix's cells."""
    from toolgate.report.build import own_set_sentence
    from toolgate.report.sets import ACROSS_CLAIMS, WITHIN_CLAIM, thesis_sentence

    base = claims_matrix("default", {**claim_tables(True), **{k: v for k, v in _tables().items() if k != "bootstrap"}},
                         SIGNALS, ROLES)
    rng = np.random.default_rng(0)
    for _ in range(40):
        m = base.assign(verdict=rng.choice(["holds", "does not hold", "not testable"], len(base)))
        cells = m.set_index(["claim", "set"])["verdict"]
        text = thesis_sentence(m, "default")
        within = cells[(WITHIN_CLAIM, "default")]
        assert f"{'cannot be tested' if within == 'not testable' else within} within this catalog" in text
        both = [s for s in dict.fromkeys(m["set"])
                if all(cells.get((c, s)) in ("holds", "does not hold") for c in ACROSS_CLAIMS)]
        held = [s for s in both if all(cells[(c, s)] == "holds" for c in ACROSS_CLAIMS)]
        if both:
            assert f"it holds on {len(held)} of the {len(both)} sets that test both transfer claims" in text
            assert _across(text) == (held, [s for s in both if s not in held]), text
        table = verdict_table(m).set_index("claims")
        for row in table.index:
            family = row.split(" (")[0]
            for s in table.columns:
                c = m[(m["family"] == family) & (m["set"] == s)]
                tested = c[c["verdict"] != "not testable"]
                want = f"{(tested['verdict'] == 'holds').sum()} of {len(tested)} hold" if len(tested) else "not testable"
                assert table.loc[row, s] == want
        own = m[m["set"] == "default"]
        n = own["verdict"].value_counts()
        sentence = own_set_sentence(own, "default")
        assert verdict_count(int(n.get("holds", 0)), "holds") + ", " in sentence
        assert verdict_count(int(n.get("does not hold", 0)), "does not hold") + " and " in sentence
        assert sentence.startswith(f"Of the {len(own)} claims ({len(own) - 3} the paper makes within its catalog, 1 "
                                   "beyond it, and 2 that carry its argument across catalogs")
