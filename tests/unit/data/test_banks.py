"""Template bank loading: errors name the bank file and the dotted field."""
import pytest
import yaml

from bank_fixtures import bank_dir  # noqa: F401  (fixture)
from toolgate.core.errors import InputError
from toolgate.data.banks import load_banks


def test_bank_errors_name_file_and_field(tmp_path, small_catalog, bank_dir):
    doc = yaml.safe_load((bank_dir / "banks.yaml").read_text())
    doc["actions"]["set_alarm"]["match"][0]["en"] = "alarm {unknown}"
    (bank_dir / "banks.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    with pytest.raises(InputError) as e:
        load_banks(bank_dir, small_catalog)
    assert e.value.field == "actions.set_alarm.match[0]" and "banks.yaml" in e.value.path
    doc["actions"]["fly"] = doc["actions"].pop("set_alarm")
    (bank_dir / "banks.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    with pytest.raises(InputError, match="'fly' is not an action"):
        load_banks(bank_dir, small_catalog)
