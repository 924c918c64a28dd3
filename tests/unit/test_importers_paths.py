"""Portable configs: a config with ``relative_to: config`` names its files relative to itself (toolgate.config.rebase)."""
import os

import pytest
from toolgate.config import rebase
from toolgate.errors import InputError


def test_rebase_moves_the_paths_the_file_sets_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    raw = {"experiment": "x", "relative_to": "config", "catalog": "catalog.jsonl",
           "utterances": {"source": "file", "file": "data/u.jsonl", "annotations": ""},
           "report": {"compare": ["../other/config.yaml", "/abs/config.yaml"]}}
    cfg = rebase(raw, [tmp_path / "runs" / "x" / "config.yaml"])
    assert cfg["catalog"] == os.path.join("runs", "x", "catalog.jsonl")
    assert cfg["utterances"]["file"] == os.path.join("runs", "x", "data", "u.jsonl")
    assert cfg["utterances"]["annotations"] == ""  # empty means none: not a path
    assert cfg["report"]["compare"] == [os.path.join("runs", "other", "config.yaml"), "/abs/config.yaml"]
    assert "templates" not in cfg["utterances"] and raw["catalog"] == "catalog.jsonl"  # defaults untouched, a copy
    assert rebase({"catalog": "c.jsonl"}, [tmp_path / "a" / "config.yaml"]) == {"catalog": "c.jsonl"}  # workdir


def test_rebase_needs_one_config_file():
    with pytest.raises(InputError, match="relative_to: config needs exactly one config file, got 2"):
        rebase({"relative_to": "config"}, ["a.yaml", "b.yaml"])
