"""The design check passes the shipped default set and fails, naming the statistic, on a broken bank."""
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from conftest import utterance, write_jsonl
from toolgate.config import load, run, section
from toolgate.data.check import DataCheckFailed, design_statistics, write_data_check
from toolgate.data.generate import generate_files
from toolgate.experiment import Experiment

ROOT = Path(__file__).resolve().parents[3]


def _generate(tmp_path, templates, **composition):
    cfg = load(ROOT / "config.yaml")
    r = run(cfg["seed"], cfg["langs"], cfg["text"])
    out = SimpleNamespace(utterances=tmp_path / "u.jsonl", meta=tmp_path / "u.json")
    generate_files(Experiment(SimpleNamespace(templates=templates, run=r,
                                              composition={**cfg["utterances"]["composition"], **composition}),
                              SimpleNamespace(catalog=ROOT / cfg["catalog"]), out))
    return cfg, r, out.utterances


def _check(catalog, utterances, annotations, report, check, r):
    """``write_data_check`` on the data_check rule's experiment."""
    return write_data_check(Experiment(SimpleNamespace(annotations=annotations, data_check=check, run=r),
                                       SimpleNamespace(catalog=catalog, utterances=utterances),
                                       SimpleNamespace(report=report)))


def test_default_set_meets_the_design_and_annotations(tmp_path):
    cfg, r, utts = _generate(tmp_path, ROOT / "data/templates/device70")
    check = section("data_check", cfg["data_check"])
    stats = _check(ROOT / cfg["catalog"], utts, ROOT / cfg["utterances"]["annotations"], tmp_path / "ok.json",
                             check, r)
    names = [s[0] for s in stats]
    assert "length auc, out vs mismatch (all)" in names
    assert "jaccard median (ko, mismatch)" in names and "annotation agreement (pass_a vs gold, mismatch)" in names
    assert json.loads((tmp_path / "ok.json").read_text())["enabled"] is True


def test_a_circumlocution_bank_fails_naming_the_statistic(tmp_path):
    banks = tmp_path / "banks"
    shutil.copytree(ROOT / "data/templates/device70", banks)
    for path in banks.glob("part*.yaml"):  # the v1 design: mismatch written as circumlocutions only
        doc = yaml.safe_load(path.read_text())
        for bank in doc["actions"].values():
            hard = bank.get("mismatch_hard") or []
            asks = [t for t in bank["mismatch"] if set(t) - {"ko", "en", "args"} == set() and "{" not in t["ko"]]
            if hard:
                bank["mismatch"] = hard + asks[:1]
        path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    cfg, r, utts = _generate(tmp_path, banks, mismatch_hard_pairs=0)
    check = section("data_check", {**cfg["data_check"], "min_agreement": 0})
    with pytest.raises(DataCheckFailed, match=r"data_check: jaccard median \(\w\w, mismatch\) is 0\.0\d+, target 0\.\d+ \+- 0\.03"):
        _check(ROOT / cfg["catalog"], utts, "", tmp_path / "bad.json", check, r)
    assert not (tmp_path / "bad.json").exists()


def test_disabled_check_writes_a_record_and_checks_nothing(tmp_path):
    rows = []
    assert design_statistics(rows, [], section("data_check", {"jaccard_medians": {}, "quartiles_separate": False,
                                                              "out_longer": False}), 3) == []


LENGTH_ONLY = {"enabled": True, "jaccard_medians": {}, "quartiles_separate": False, "out_longer": False, "min_agreement": 0,
               "length_auc": {"target": 0.743, "tolerance": 0.03}}


def _length_check(tmp_path, catalog, out_lengths):
    """Four mismatch items of 10-16 n-grams and four out items of ``out_lengths``, in each language."""
    rows = []
    for lang in ("ko", "en"):
        rows += [{**utterance(i, slice_="mismatch", lang=lang), "text": "m" * n} for i, n in enumerate((10, 12, 14, 16))]
        rows += [{**utterance(10 + i, slice_="out", outcome="delegate", tool_id=None, lang=lang), "text": "o" * n}
                 for i, n in enumerate(out_lengths)]
    paths = write_jsonl(tmp_path / "c.jsonl", catalog), write_jsonl(tmp_path / "u.jsonl", rows)
    return _check(*paths, "", tmp_path / "check.json", section("data_check", LENGTH_ONLY), run(0, ("ko", "en")))


def test_long_out_items_fail_naming_the_length_statistic(tmp_path, small_catalog):
    with pytest.raises(DataCheckFailed, match=r"length auc, out vs mismatch \(all\) is 1\.0000, target 0\.743 \+- 0\.03"):
        _length_check(tmp_path, small_catalog, (40, 42, 44, 46))
    assert not (tmp_path / "check.json").exists()


def test_overlapping_lengths_pass_and_each_language_is_reported(tmp_path, small_catalog):
    _length_check(tmp_path, small_catalog, (11, 15, 17, 19))  # 12 of 16 out-mismatch pairs ordered: AUC 0.75
    checks = {c["statistic"]: c for c in json.loads((tmp_path / "check.json").read_text())["checks"]}
    assert checks["length auc, out vs mismatch (all)"]["value"] == 0.75
    assert {checks[f"length auc, out vs mismatch ({lang})"]["target"] for lang in ("ko", "en")} == {"reported"}
