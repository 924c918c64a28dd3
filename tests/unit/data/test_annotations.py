"""Annotation passes: loading with located errors, agreement and kappa against gold and between passes."""
import pytest
from sklearn.metrics import cohen_kappa_score

from conftest import utterance
from toolgate.core.errors import InputError
from toolgate.data.annotations import agreement_frame, confusions, joined, load_passes


def _write(folder, name, lines):
    (folder / f"{name}.csv").write_text("# how this pass was made\nlang,text,answer\n" + "".join(f"{l}\n" for l in lines))


def test_bad_answers_and_headers_are_located(tmp_path, small_catalog):
    _write(tmp_path, "a", ["en,hello,set_alarm", "en,bye,no_such_tool"])
    with pytest.raises(InputError, match=r"a.csv:4: field 'answer': 'no_such_tool' is not an action id"):
        load_passes(tmp_path, small_catalog)
    (tmp_path / "a.csv").write_text("text,answer\nhello,none\n")
    with pytest.raises(InputError, match="header must be lang,text,answer"):
        load_passes(tmp_path, small_catalog)


def test_agreement_and_kappa_hand_computed(tmp_path, small_catalog):
    rows = [utterance(1), utterance(2), utterance(3, tool_id="make_call"), utterance(4, tool_id="make_call")]
    _write(tmp_path, "a", ["en,request 1 en,set_alarm", "en,request 2 en,set_alarm", "en,request 3 en,make_call",
                           "en,request 4 en,set_alarm"])
    _write(tmp_path, "b", ["en,request 1 en,set_alarm", "en,request 2 en,make_call", "en,request 3 en,make_call"])
    passes = load_passes(tmp_path, small_catalog)
    ann = joined(rows, passes)
    df = agreement_frame(ann, passes).set_index(["lang", "compare"])
    a = df.loc[("en", "a vs gold")]
    assert (a["n"], a["annotated"], a["agreement"]) == (4, 4, 0.75)
    gold, ans = ["set_alarm", "set_alarm", "make_call", "make_call"], ["set_alarm", "set_alarm", "make_call", "set_alarm"]
    assert a["kappa"] == pytest.approx(cohen_kappa_score(gold, ans))
    ab = df.loc[("en", "a vs b")]
    assert (ab["annotated"], ab["agreement"]) == (3, pytest.approx(2 / 3))
    conf = confusions(ann, passes)
    assert conf.values.tolist() == [["make_call", "set_alarm", 1], ["set_alarm", "make_call", 1]]
