import json
from types import SimpleNamespace

import pytest

from bank_fixtures import bank_dir  # noqa: F401  (fixture)
from conftest import write_jsonl
from toolgate.config import run
from toolgate.core.errors import InputError
from toolgate.data import generate as data
from toolgate.data.banks import load_banks
from toolgate.experiment import Experiment

COMP = {"in_catalog_pairs": 8, "ask_pairs": 2, "match_share": 0.5, "external_service_pairs": 2,
        "multistep_pairs": 1, "chat_pairs": 1, "min_per_action": 2, "mismatch_hard_pairs": 0}


def test_generate_exact_composition_and_labels(small_catalog, bank_dir):
    banks = load_banks(bank_dir, small_catalog)
    rows = data.generate(small_catalog, banks, COMP, seed=1)
    assert len(rows) == 2 * (8 + 2 + 1 + 1)
    asks = [r for r in rows if r["gold_outcome"] == "ask"]
    assert len(asks) == 4 and all(r["missing_slots"] == ["x"] and "ask" in r["text"] for r in asks)
    assert all("{" not in r["text"] for r in rows)
    # particle agreement applied in Korean only: 엄마를/동생을, 엄마가/동생이
    ko = " ".join(r["text"] for r in rows if r["lang"] == "ko")
    assert "엄마를" in ko or "동생을" in ko
    assert "엄마을" not in ko and "동생를" not in ko


def test_mismatch_hard_stands_beside_the_main_set(small_catalog, bank_dir):
    banks = load_banks(bank_dir, small_catalog)
    main = data.generate(small_catalog, banks, COMP, seed=1)
    both = data.generate(small_catalog, banks, {**COMP, "mismatch_hard_pairs": 3}, seed=1)
    assert both[: len(main)] == main  # the main set does not depend on the hard slice's size
    hard = both[len(main):]
    assert len(hard) == 6 and {r["slice"] for r in hard} == {"mismatch_hard"}
    assert all(r["pair_id"].startswith("h") and r["gold_outcome"] == "action" for r in hard)
    assert {r["gold_tool"] for r in hard} == {"set_alarm", "make_call"}  # round-robin over the actions with templates
    with pytest.raises(InputError, match="5 mismatch_hard pairs needed, the banks have 4"):
        data.generate(small_catalog, banks, {**COMP, "mismatch_hard_pairs": 5}, seed=1)


def test_generation_deterministic_and_seed_sensitive(small_catalog, bank_dir):
    banks = load_banks(bank_dir, small_catalog)
    a = data.generate(small_catalog, banks, COMP, seed=5)
    assert a == data.generate(small_catalog, banks, COMP, seed=5)
    assert a != data.generate(small_catalog, banks, COMP, seed=6)


def test_generate_files_byte_identical_with_sidecar(tmp_path, small_catalog, bank_dir):
    cat = write_jsonl(tmp_path / "c.jsonl", small_catalog)
    for name in ("a", "b"):
        data.generate_files(Experiment(SimpleNamespace(templates=bank_dir, composition=COMP, run=run(3, ("ko", "en"))),
                                       SimpleNamespace(catalog=cat),
                                       SimpleNamespace(utterances=tmp_path / f"{name}.jsonl", meta=tmp_path / f"{name}.json")))
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    meta = json.loads((tmp_path / "a.json").read_text())
    assert meta["seed"] == 3 and meta["rows"] == 24 and len(meta["config_hash"]) == 64 and meta["toolgate_version"]


@pytest.mark.parametrize("change,msg", [
    ({"ask_pairs": 9}, "ask_pairs exceeds"),
    ({"ask_pairs": 8}, "missing-slot templates"),
    ({"chat_pairs": 3}, "3 chat pairs needed"),
    ({"match_share": 0.3}, "whole number"),
    ({"in_catalog_pairs": 4}, "in_catalog_pairs must be >="),
])
def test_generate_refuses_impossible_composition(small_catalog, bank_dir, change, msg):
    banks = load_banks(bank_dir, small_catalog)
    with pytest.raises(InputError, match=msg):
        data.generate(small_catalog, banks, {**COMP, **change}, seed=1)


def test_check_composition_catches_violations(small_catalog, bank_dir):
    banks = load_banks(bank_dir, small_catalog)
    rows = data.generate(small_catalog, banks, COMP, seed=1)
    with pytest.raises(InputError, match="chat pairs: got 1, configured 2"):
        data.check_composition(rows, small_catalog, {**COMP, "chat_pairs": 2})
    with pytest.raises(InputError, match="incomplete"):
        data.check_composition(rows[1:], small_catalog, COMP)
    changed = [dict(r) for r in rows]
    changed[1]["slice"] = "out" if changed[1]["slice"] != "out" else "match"
    with pytest.raises(InputError, match="different labels"):
        data.check_composition(changed, small_catalog, COMP)
    dup = [dict(r) for r in rows]
    dup[2]["text"] = dup[0]["text"] if dup[0]["lang"] == dup[2]["lang"] else dup[1]["text"]
    with pytest.raises(InputError, match="duplicate text"):
        data.check_composition(dup, small_catalog, COMP)
