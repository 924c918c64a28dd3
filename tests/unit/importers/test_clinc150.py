"""toolgate import clinc150 on a hand-made data_full.json-shaped file: intents as tools with their training requests
as examples, validation and test as the requests (split recorded), out of scope out of catalog; the one reader
``toolgate clinc150`` and the data stage share; one-line errors naming the row."""
import json

import pytest

import toolgate.external.experiment as E
import toolgate.external.sources as S
from import_fixtures import clinc_folder
from toolgate.cli import main
from toolgate.config import load
from toolgate.core.errors import InputError
from toolgate.external.adapters import clinc150_splits
from toolgate.importers import Destination, Options, import_set
from toolgate.router.clinc150 import read_clinc
from toolgate.utterances import load_inputs


def _read(out):
    catalog, rows = load_inputs(out / "catalog.jsonl", out / "utterances.jsonl", ("en",))
    return catalog, rows, json.loads((out / "import.json").read_text())


def test_intents_are_tools_with_their_training_requests_as_examples(tmp_path):
    out = tmp_path / "clinc"
    import_set("clinc150", [clinc_folder(tmp_path)], Destination(out), Options())
    catalog, rows, info = _read(out)
    tools = {t["id"]: t for t in catalog if t["kind"] == "action"}
    assert sorted(tools) == ["balance", "change_accent", "translate"]
    assert tools["change_accent"]["descriptions"] == {"en": "change accent"}  # the name made readable, nothing more
    assert tools["translate"]["examples"] == [{"text": "translate please, variant 0", "lang": "en"},
                                              {"text": "translate please, variant 1", "lang": "en"}]
    assert [(r["subtype"], r["gold_tool"]) for r in rows] == [
        ("val", "translate"), ("val", "balance"), ("oos_val", None),
        ("test", "change_accent"), ("test", "balance"), ("oos_test", None), ("oos_test", None)]
    assert {r["gold_outcome"] for r in rows if r["gold_tool"] is None} == {"delegate"}
    assert info["examples"] == 6 and info["in_catalog"] == 4 and info["out_of_catalog"] == 3
    decided = info["decisions"]
    assert decided["out-of-scope training requests not read (oos-threshold protocol)"] == 1
    assert any(k.startswith("source file: not the pinned data_full.json") for k in decided)  # a hand-made file
    assert load(out / "config.yaml")["langs"] == ["en"]


def test_subsets_keep_one_split_with_its_out_of_scope(tmp_path):
    out = tmp_path / "test_only"
    import_set("clinc150", [clinc_folder(tmp_path) / "data_full.json"], Destination(out), Options(subsets=("test",)))
    _, rows, _ = _read(out)
    assert [r["subtype"] for r in rows] == ["test", "test", "oos_test", "oos_test"]


def test_one_reader_for_the_benchmark_the_import_and_the_data_stage(tmp_path, monkeypatch):
    folder = clinc_folder(tmp_path)
    for module in (S, E):  # the fixture is not the pinned file
        monkeypatch.setattr(module, "locate", lambda name, mirror=None, **_: folder)
    assert read_clinc(None) == clinc150_splits(folder / "data_full.json")
    catalog, utts, info = E.clinc150_experiment(13)
    assert [t["id"] for t in catalog if t["kind"] == "route"] == ["chat", "delegate", "clarify"]
    assert info == {"in_catalog": 4, "out_of_catalog": 3, "actions": 3, "examples": 6}
    assert {u["slice"] for u in utts} == {"in", "out"}


@pytest.mark.parametrize("change,field,message", [
    (lambda d: d["val"].append(["x"]), "val[2]", "expected [text, intent]"),
    (lambda d: d["test"].append(["play jazz", "play_music"]), "test[2]", "no training request"),
    (lambda d: d["val"].append(["who are you", "oos"]), "val[2]", "intent 'oos' in split val"),
    (lambda d: d.pop("oos_test"), "oos_test", "missing split"),
])
def test_bad_rows_are_named(tmp_path, change, field, message):
    data = json.loads((clinc_folder(tmp_path / "good") / "data_full.json").read_text())
    change(data)
    path = clinc_folder(tmp_path, data) / "data_full.json"
    with pytest.raises(InputError) as err:
        clinc150_splits(path)
    assert err.value.field == field and message in err.value.message


def test_command_line_error_is_one_line_exit_2(tmp_path, capsys):
    path = clinc_folder(tmp_path, {"train": []}) / "data_full.json"
    assert main(["import", "clinc150", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "data_full.json" in err and "val" in err
    assert not (tmp_path / "o").exists()
