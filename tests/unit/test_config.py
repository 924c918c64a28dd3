import re
from pathlib import Path

import pytest
import yaml

from toolgate import config
from toolgate.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", [ROOT / "config.yaml", *sorted((ROOT / "config").glob("*.yaml"))],
                         ids=lambda p: p.name)
def test_shipped_configs_validate(path):
    cfg = config.load(path)
    assert cfg["text"]["ngram"] >= 1 and cfg["experiment"]


def test_defaults_filled_inside_named_entries():
    cfg = config.resolve({"experiment": "x", "rankers": {"lex": {"type": "bm25"}}})
    assert cfg["rankers"]["lex"] == {"type": "bm25", "variant": "E0", "k1": 1.5, "b": 0.75, "idf": "lucene", "epsilon": 0.25,
                                     "tokenizer": "char"}


def test_defaults_filled():
    cfg = config.resolve({"experiment": "x"})
    assert cfg["seed"] == 13
    assert cfg["utterances"]["composition"]["in_catalog_pairs"] == 210
    assert cfg["text"] == {"ngram": 3, "pad": True}


@pytest.mark.parametrize("bad,field", [
    ({"experiment": "x", "text": {"ngram": 0}}, "text.ngram"),
    ({"experiment": "x", "utterances": {"source": "web"}}, "utterances.source"),
    ({"experiment": "x", "typo_key": 1}, "typo_key"),
    ({"experiment": "a b"}, "experiment"),
    ({}, "experiment"),
])
def test_bad_config_names_key(bad, field):
    with pytest.raises(InputError) as e:
        config.resolve(bad)
    assert e.value.field == field


def _every_key_documented(node, path="config"):
    for key, sub in node.get("properties", {}).items():
        assert "description" in sub, f"{path}.{key} has no description"
        if key not in node.get("required", []) + node.get("then", {}).get("required", []):
            assert "default" in sub, f"{path}.{key} has no default"
        _every_key_documented(sub, f"{path}.{key}")
    if isinstance(node.get("additionalProperties"), dict):
        _every_key_documented(node["additionalProperties"], f"{path}.*")


def test_schema_documents_every_key():
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    _every_key_documented(schema)


def test_conda_env_in_step_with_pyproject():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + project["optional-dependencies"]["bench"]
    env = yaml.safe_load((ROOT / "envs/toolgate.yaml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    norm = lambda s: re.sub(r"\s+", "", s)
    assert sorted(map(norm, pip)) == sorted(map(norm, deps))
