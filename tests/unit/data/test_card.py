"""Data card: Jaccard with the gold text, lengths, the three files it writes, the data licences."""
import json
from types import SimpleNamespace

import pandas as pd

from conftest import utterance, write_jsonl
from toolgate.config import run
from toolgate.config import section as config_section
from toolgate.data.card import gold_text, jaccard_frame, length_table, licence_sentences, write_data_card
from toolgate.experiment import Experiment


def test_jaccard_with_the_gold_name_and_description(small_catalog):
    t = small_catalog[0]
    assert gold_text(t, "en") == "set alarm Does set_alarm."
    row = {**utterance(1), "text": gold_text(t, "en")}
    out = {**utterance(2, slice_="out", outcome="delegate", tool_id=None)}
    df = jaccard_frame([row, out], small_catalog, 3)
    assert df["utterance_id"].tolist() == ["u1-en"] and df["jaccard"].iloc[0] == 1.0


def test_length_table_counts_ngrams():
    rows = [{**utterance(1), "text": "abcd"}, {**utterance(2), "text": "ab"}]
    t = length_table(rows, 3).iloc[0]  # " abcd " -> 4 grams, " ab " -> 2 grams
    assert (t["n"], t["ngrams_median"], t["chars_median"]) == (2, 3.0, 3.0)


def _card(catalog, utterances, outputs, section: dict) -> Experiment:
    """The data_card rule's experiment: one example per slice, ``section`` as the config's utterances section."""
    return Experiment(SimpleNamespace(examples=1, utterances=section, run=run(0, ("ko", "en")),
                                      external=config_section("external")),
                      SimpleNamespace(catalog=catalog, utterances=utterances), outputs)


def test_write_data_card_outputs(tmp_path, small_catalog):
    cat = write_jsonl(tmp_path / "c.jsonl", small_catalog)
    rows = [utterance(1), utterance(1, lang="ko"), utterance(2, slice_="mismatch"), utterance(2, lang="ko", slice_="mismatch")]
    utts = write_jsonl(tmp_path / "u.jsonl", rows)
    outs = SimpleNamespace(card=tmp_path / "card.md", composition=tmp_path / "composition.csv",
                           jaccard=tmp_path / "jaccard.csv", agreement=tmp_path / "agreement.csv")
    ann = tmp_path / "ann"
    ann.mkdir()
    (ann / "p1.csv").write_text("# made by hand\nlang,text,answer\nen,request 1 en,set_alarm\nen,request 2 en,none\n")
    write_data_card(_card(cat, utts, outs, {"annotations": str(ann)}))
    assert "## Vocabulary overlap" in outs.card.read_text() and "`jaccard.*`" in outs.card.read_text()
    comp = pd.read_csv(outs.composition)
    assert comp["n"].sum() == 4
    assert set(pd.read_csv(outs.jaccard)["slice"]) == {"match", "mismatch"}
    agree = pd.read_csv(outs.agreement).set_index(["lang", "slice", "compare"])
    assert agree.loc[("en", "match", "p1 vs gold"), "agreement"] == 1.0
    assert agree.loc[("en", "mismatch", "p1 vs gold"), "agreement"] == 0.0  # set_alarm read as none
    assert agree.loc[("ko", "match", "p1 vs gold"), "annotated"] == 0
    assert "set_alarm | none | 1" in outs.card.read_text()  # the confusable pair
    card = outs.card.read_text()
    samples = card[card.index("## Random examples"):]
    assert "**en / match**" in samples and "**ko / mismatch**" in samples and samples.count("\n- `") == 4
    assert "longer = out): all not computed, en not computed, ko not computed (no mismatch items, or no " \
           "out-of-catalog ones)." in card  # the set has no out-of-catalog items


def test_the_card_names_the_licences_of_the_data_it_used(tmp_path, small_catalog):
    """The licences of the external sets the experiment reads; an imported set's as import.json records them, or
    that it records none."""
    cat = write_jsonl(tmp_path / "c.jsonl", small_catalog)
    utts = write_jsonl(tmp_path / "u.jsonl", [utterance(1), utterance(2, slice_="mismatch")])
    outs = SimpleNamespace(card=tmp_path / "card.md", composition=tmp_path / "composition.csv",
                           jaccard=tmp_path / "jaccard.csv", agreement=tmp_path / "agreement.csv")
    write_data_card(_card(cat, utts, outs, {}))
    card = outs.card.read_text()
    assert "Data licences: this experiment read no external data set." in card and "imported set" not in card
    off = config_section("external", {"enabled": False})
    assert licence_sentences(utts, "generate", off) == ["Data licences: this experiment read no external data set."]
    bfcl = config_section("external", {"enabled": True, "sets": ["bfcl"]})
    only = licence_sentences(utts, "generate", bfcl)[0]
    assert "BFCL v4" in only and "FunctionChat" not in only
    assert "FunctionChat-Bench" in licence_sentences(utts, "functionchat", bfcl)[0]  # its own requests' source
    both = licence_sentences(utts, "generate", config_section("external", {"enabled": True}))[0]
    assert both.count("under Apache-2.0") == 2 and "(kakao/FunctionChat-Bench at cb32af378a2b)" in both
    (tmp_path / "import.json").write_text(json.dumps({"licenses": []}))
    assert licence_sentences(utts, "file", off)[1] == ("The imported set records no licence: `toolgate import "
                                                       "--license` declares it.")
    (tmp_path / "import.json").write_text(json.dumps({"licenses": [{"name": "CC-BY-4.0", "file": "src/LICENSE"},
                                                                   {"name": "MIT"}]}))
    assert licence_sentences(utts, "file", off)[1] == "The imported set's licence: CC-BY-4.0 (`src/LICENSE`); MIT."
