"""Output folders of export and import: refused places, existing folders, --force, nothing half-written."""
import json

import pytest

from import_fixtures import EXAMPLE
from router_fixtures import make_artifact
from toolgate.cli import main
from toolgate.errors import InputError
from toolgate.outdir import write_folder


def _write(files):
    def write(tmp):
        for name, text in files.items():
            (tmp / name).write_text(text)
        (tmp / "m.json").write_text(json.dumps({"files": sorted(files)}))
    return write


def _put(folder, files, force=False, **kw):
    return write_folder(folder, "m.json", lambda m: m["files"], _write(files), force, **kw)


def test_a_new_folder_appears_whole_and_nothing_is_left_beside(tmp_path):
    assert _put(tmp_path / "out", {"a": "1"}) == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (tmp_path / "out" / "a").read_text() == "1"


def test_a_failed_write_leaves_no_folder(tmp_path):
    def fail(tmp):
        (tmp / "a").write_text("half")
        raise InputError("x", "bad")
    with pytest.raises(InputError):
        write_folder(tmp_path / "out", "m.json", lambda m: m["files"], fail)
    assert list(tmp_path.iterdir()) == []


def test_user_files_are_never_removed_or_overwritten(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="holds files toolgate did not write"):
        _put(out, {"a": "1"})
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert _put(out, {"a": "1"}, force=True) == "beside"
    (out / "a").write_text("edited")
    assert _put(out, {"b": "2"}, force=True) == "replaced"  # the recorded 'a' goes, the user's file stays
    assert sorted(p.name for p in out.iterdir()) == ["b", "m.json", "notes.txt"]
    assert (out / "notes.txt").read_text() == "mine"


def test_force_never_replaces_a_file_it_did_not_write(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a").write_text("mine")
    with pytest.raises(InputError, match="was not written by toolgate"):
        _put(out, {"a": "1"}, force=True)
    assert (out / "a").read_text() == "mine" and sorted(p.name for p in out.iterdir()) == ["a"]


def test_an_earlier_artifact_needs_force(tmp_path):
    _put(tmp_path / "out", {"a": "1"})
    with pytest.raises(InputError, match="earlier m.json artifact"):
        _put(tmp_path / "out", {"a": "2"})
    assert (tmp_path / "out" / "a").read_text() == "1"


def test_protected_places_are_refused(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "Snakefile").write_text("")
    with pytest.raises(InputError, match="root of a git work tree"):
        _put(repo, {"a": "1"}, force=True)
    monkeypatch.chdir(repo / ".git")
    with pytest.raises(InputError, match="current folder or one above"):
        _put(repo / ".git", {"a": "1"}, force=True)
    for place in ("results/default", "figures/x", "results"):
        with pytest.raises(InputError, match="holds workflow outputs only"):
            _put(repo / place, {"a": "1"})
    with pytest.raises(InputError, match="only results/<experiment>/router/ is"):
        _put(repo / "results" / "default" / "tables", {"a": "1"}, allowed_output="router")
    assert _put(repo / "results" / "default" / "router" / "P1", {"a": "1"}, allowed_output="router") == "new"
    assert sorted(p.name for p in repo.iterdir()) == [".git", "Snakefile", "results"]


def test_export_keeps_a_user_file_and_replaces_only_its_own(tmp_path):
    out = make_artifact(tmp_path, real_gate=False)  # exports into tmp_path/router
    (out / "README.txt").write_text("my notes")
    with pytest.raises(InputError, match="earlier router.json artifact"):
        make_artifact(tmp_path, real_gate=False)
    assert (out / "README.txt").read_text() == "my notes"


def test_import_never_overwrites_a_config(tmp_path, capsys):
    out = tmp_path / "exp"
    out.mkdir()
    (out / "config.yaml").write_text("experiment: mine\n")
    args = ["import", "openai-tools", str(EXAMPLE / "tools.json"), str(EXAMPLE / "requests.jsonl"), "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds files toolgate did not write (e.g. config.yaml)" in err
    assert main([*args, "--force"]) == 2  # a name clash: --force never replaces the user's config
    assert (out / "config.yaml").read_text() == "experiment: mine\n" and sorted(p.name for p in out.iterdir()) == ["config.yaml"]
    (out / "config.yaml").unlink()
    assert main(args) == 0 and main(args) == 2 and main([*args, "--force"]) == 0
    assert "replaced the earlier import's files" in capsys.readouterr().out
