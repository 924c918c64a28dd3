"""Portable configs: a config with ``relative_to: config`` names its files relative to itself (toolgate.config.rebase),
so the one ``toolgate import`` writes works from the project root wherever its folder is."""
import os

import pytest
import yaml

from import_fixtures import EXAMPLE
from toolgate.config import load, rebase
from toolgate.core.errors import InputError
from toolgate.importers import Destination, Options, import_set


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


def test_written_config_resolves_from_any_folder(tmp_path, monkeypatch):
    out = tmp_path / "elsewhere" / "smart"
    monkeypatch.chdir(tmp_path)
    import_set("openai-tools", [EXAMPLE / "tools.json", EXAMPLE / "requests.jsonl"], Destination(out.relative_to(tmp_path)),
               Options())
    written = yaml.safe_load((out / "config.yaml").read_text())
    assert (written["relative_to"], written["catalog"], written["utterances"]["file"]) == (
        "config", "catalog.jsonl", "utterances.jsonl")
    for cwd in (tmp_path, out, tmp_path / "elsewhere"):  # where import ran, the folder itself, one above it
        monkeypatch.chdir(cwd)
        cfg = load(os.path.relpath(out / "config.yaml"))
        assert (cwd / cfg["catalog"]).resolve() == out / "catalog.jsonl"
        assert (cwd / cfg["utterances"]["file"]).resolve() == out / "utterances.jsonl"
        assert cfg["report"]["reported"] == "data/paper/reported.yaml"  # a default stays the workflow's own


def test_run_path_is_relative_to_the_checkout_the_command_runs_in(tmp_path, monkeypatch):
    from toolgate.importers.build import PROJECT, run_path

    (tmp_path / "Snakefile").write_text("")
    monkeypatch.chdir(tmp_path)
    assert run_path(tmp_path / "runs" / "car") == os.path.join("runs", "car", "config.yaml")
    elsewhere = tmp_path / "plain"  # no Snakefile here: the path as toolgate's own checkout sees it
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert run_path(tmp_path / "runs" / "car") == os.path.relpath(tmp_path / "runs" / "car" / "config.yaml", PROJECT)
