"""Output folders of export and import: refused places, existing folders, --force (only files toolgate recorded
writing, unchanged), nothing half-written, temporary folders of killed commands cleaned."""
import errno
import fcntl
import functools
import hashlib
import json
import os
import stat
import subprocess
import sys
import time

import pytest

import router_fixtures
from import_fixtures import EXAMPLE
from router_fixtures import make_artifact
from toolgate import outdir
from toolgate.cli import main
from toolgate.core.errors import InputError
from toolgate.outdir import RECORD, SENTINEL, write_folder
from toolgate.router.export import export_router


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write(files):
    def write(tmp):
        for name, text in files.items():
            (tmp / name).write_text(text)
        (tmp / "m.json").write_text(json.dumps({"files": {n: {"sha256": _sha(tmp / n)} for n in sorted(files)}}))
    return write


NAMES = ("a", "b", "m.json")  # the test format's fixed file names, its marker last


def _put(folder, files, force=False, **kw):
    return write_folder(folder, NAMES, _write(files), force, **kw)


def test_a_new_folder_appears_whole_and_nothing_is_left_beside(tmp_path):
    assert _put(tmp_path / "out", {"a": "1"}) == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (tmp_path / "out" / "a").read_text() == "1"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [RECORD, "a", "m.json"]


def test_a_failed_write_leaves_no_folder(tmp_path):
    def fail(tmp):
        (tmp / "a").write_text("half")
        raise InputError("x", "bad")
    with pytest.raises(InputError):
        write_folder(tmp_path / "out", NAMES, fail)
    assert list(tmp_path.iterdir()) == []


def test_user_files_are_never_removed_or_overwritten(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="holds files toolgate did not write"):
        _put(out, {"a": "1"})
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert _put(out, {"a": "1"}, force=True) == "beside"
    (out / "a").write_text("edited")  # the user's now: refused, not deleted
    with pytest.raises(InputError, match=r"/a: changed since toolgate wrote it"):
        _put(out, {"b": "2"}, force=True)
    assert (out / "a").read_text() == "edited" and not (out / "b").exists()
    (out / "a").write_text("1")
    assert _put(out, {"b": "2"}, force=True) == "replaced"  # the recorded 'a' goes, the user's file stays
    assert sorted(p.name for p in out.iterdir()) == [RECORD, "b", "m.json", "notes.txt"]
    assert (out / "notes.txt").read_text() == "mine"


def test_force_never_replaces_a_file_it_did_not_write(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a").write_text("mine")
    with pytest.raises(InputError, match="toolgate has no record of writing it"):
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


def _refused(capsys, args, *says):
    """The CLI refuses with one line saying each of ``says``, exit 2."""
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and all(x in err for x in says), err
    return err


def _import(out):
    return ["import", "openai-tools", str(EXAMPLE / "tools.json"), str(EXAMPLE / "requests.jsonl"), "--out", str(out)]


def _files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not p.is_symlink()}


def test_export_force_never_trusts_another_programs_router_json(tmp_path, monkeypatch):
    out = tmp_path / "router"
    out.mkdir()
    (out / "report.docx").write_bytes(b"PK report")
    (out / "data.csv").write_text("a,b\n1,2\n")
    (out / "router.json").write_text(json.dumps({"files": ["report.docx", "data.csv"]}))
    before = _files(out)
    with pytest.raises(InputError, match="holds files toolgate did not write"):
        make_artifact(tmp_path, real_gate=False)
    monkeypatch.setattr(router_fixtures, "export_router", functools.partial(export_router, force=True))
    with pytest.raises(InputError, match=r"router/router.json: exists and toolgate has no record of writing it"):
        make_artifact(tmp_path, real_gate=False)
    assert _files(out) == before and sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")) == []


def test_export_then_export_force_replaces_the_earlier_routers_files(tmp_path, monkeypatch):
    out = make_artifact(tmp_path, real_gate=False)
    (out / "README.txt").write_text("my notes")
    first = _files(out)
    monkeypatch.setattr(router_fixtures, "export_router", functools.partial(export_router, force=True))
    make_artifact(tmp_path, real_gate=False)
    assert _files(out) == first  # the same export again, byte-identical, the user's notes kept
    record = json.loads((out / RECORD).read_text())
    assert record["marker"] == "router.json" and sorted(record["files"]) == sorted(set(first) - {RECORD, "README.txt"})


@pytest.mark.parametrize("marker, victims", [
    ({"files": ["photo1.jpg", "photo2.jpg"]}, ["photo1.jpg", "photo2.jpg"]),
    ({"files": "abc"}, ["a", "b", "c"]),
    ("[" * 100_000 + "]" * 100_000, ["notes.txt"]),  # deep nesting: was a RecursionError traceback
    ('{"files": ' + "9" * 5000 + "}", ["notes.txt"]),  # an int over 4,300 digits: was a ValueError
])
def test_import_force_never_trusts_another_programs_import_json(tmp_path, capsys, marker, victims):
    out = tmp_path / "exp"
    out.mkdir()
    for name in victims:
        (out / name).write_text(f"the user's {name}")
    (out / "import.json").write_text(marker if isinstance(marker, str) else json.dumps(marker))
    before = _files(out)
    _refused(capsys, _import(out), "holds files toolgate did not write")
    _refused(capsys, [*_import(out), "--force"], "import.json: exists and toolgate has no record of writing it")
    assert _files(out) == before


def test_a_marker_that_is_a_symlink_is_not_followed(tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"files": ["notes.txt"]}))
    out = tmp_path / "exp"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "import.json").symlink_to(elsewhere)
    _refused(capsys, [*_import(out), "--force"], "import.json: exists and toolgate has no record of writing it")
    assert (out / "notes.txt").read_text() == "mine" and (out / "import.json").is_symlink()
    assert json.loads(elsewhere.read_text()) == {"files": ["notes.txt"]}


def test_import_then_import_force_replaces_only_unchanged_files_it_wrote(tmp_path, capsys):
    out = tmp_path / "exp"
    assert main(_import(out)) == 0
    names = sorted([*_files(out), "notes.txt"])
    (out / "notes.txt").write_text("mine")
    assert main([*_import(out), "--force"]) == 0 and sorted(_files(out)) == names
    (out / "config.yaml").write_text("experiment: edited\n")
    _refused(capsys, [*_import(out), "--force"], "config.yaml: changed since toolgate wrote it", "move it")
    assert (out / "config.yaml").read_text() == "experiment: edited\n"
    (out / "config.yaml").unlink()  # gone: nothing to replace, the rest verifies
    assert main([*_import(out), "--force"]) == 0 and sorted(_files(out)) == names
    assert (out / "notes.txt").read_text() == "mine" and "--force" in json.loads((out / "import.json").read_text())["command"]


def _record(out, files, marker="m.json", **extra):
    digest = "0" * 64
    (out / RECORD).write_text(json.dumps({"format": "toolgate-owned/1", "marker": marker,
                                          "files": {n: [digest] for n in files}, **extra}))


@pytest.mark.parametrize("record", [
    "[" * 100_000 + "]" * 100_000,
    '{"format": ' + "1" * 5000 + "}",
    "not json",
    json.dumps({"format": "toolgate-owned/1", "marker": "m.json", "files": {"m.json": "abc"}}),
    json.dumps({"format": "toolgate-owned/1", "marker": ["m.json"], "files": {"m.json": ["0" * 64]}}),
    json.dumps({"format": "toolgate-owned/1", "marker": "m.json", "files": {"m.json": ["0" * 64], "../x": ["0" * 64]}}),
    json.dumps({"format": "toolgate-owned/1", "marker": "m.json", "files": {"m.json": ["0" * 64], "s/x": ["0" * 64]}}),
    json.dumps({"format": "other", "marker": "m.json", "files": {"m.json": ["0" * 64]}}),
])
def test_a_record_toolgate_did_not_write_is_refused_in_one_line(tmp_path, record):
    out = tmp_path / "out"
    (out / "s").mkdir(parents=True)
    (out / "s" / "x").write_text("mine")
    (tmp_path / "x").write_text("mine")
    (out / RECORD).write_text(record)
    for force in (False, True):
        with pytest.raises(InputError, match=r"\.toolgate-owned\.json: is not a record toolgate wrote") as e:
            _put(out, {"m.json": "1"}, force=force)
        assert "\n" not in str(e.value)
    assert (out / "s" / "x").read_text() == "mine" and (tmp_path / "x").read_text() == "mine"


def test_force_never_follows_a_symlink_nor_replaces_another_kind(tmp_path):
    out, target = tmp_path / "out", tmp_path / "target.txt"
    _put(out, {"a": "1"})
    target.write_text("1")  # the same content as the recorded 'a'
    (out / "a").unlink()
    (out / "a").symlink_to(target)
    with pytest.raises(InputError, match=r"/a: is not a regular file \(a symlink"):
        _put(out, {"b": "2"}, force=True)
    assert target.read_text() == "1" and (out / "a").is_symlink()
    (out / "a").unlink()
    (out / RECORD).rename(tmp_path / "record")
    (out / RECORD).symlink_to(tmp_path / "record")  # a record that is a symlink is not toolgate's
    with pytest.raises(InputError, match="is not a record toolgate wrote"):
        _put(out, {"b": "2"}, force=True)
    (out / RECORD).unlink()
    (tmp_path / "record").rename(out / RECORD)
    with pytest.raises(InputError, match="holds a toolgate m.json artifact, not a router.json one"):
        write_folder(out, ("b", "router.json"), _write({"b": "2"}), force=True)
    assert sorted(p.name for p in out.iterdir()) == [RECORD, "m.json"]


def test_a_kill_while_replacing_leaves_a_record_that_verifies(tmp_path, monkeypatch):
    out = tmp_path / "out"
    _put(out, {"a": "1", "b": "1"})
    calls, real_replace = [], os.replace

    def killed(src, dst):  # the 4th move: after the interim record and the new 'a', before 'b' and the marker
        calls.append(dst)
        if len(calls) == 4:
            raise KeyboardInterrupt
        real_replace(src, dst)
    monkeypatch.setattr(outdir.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        _put(out, {"a": "2", "b": "2"}, force=True)
    monkeypatch.undo()
    assert (out / "a").read_text() == "2" and (out / "b").read_text() == "1"
    assert _put(out, {"a": "3", "b": "3"}, force=True) == "replaced"
    assert (out / "a").read_text() == "3" and (out / "b").read_text() == "3"
    assert all(len(d) == 1 for d in json.loads((out / RECORD).read_text())["files"].values())


def test_git_folders_are_never_written(tmp_path, capsys):
    repo = tmp_path / "repo"
    (repo / ".git" / "hooks").mkdir(parents=True)
    (repo / ".git" / "hooks" / "pre-commit.sample").write_text("#!/bin/sh\n")
    bare = tmp_path / "bare.git"
    for sub in ("hooks", "objects", "refs"):
        (bare / sub).mkdir(parents=True)
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    for place in (repo / ".git" / "hooks", repo / ".git", bare / "hooks", bare / "objects" / "new"):
        _refused(capsys, [*_import(place), "--force"], "lies in the git folder", "must name a folder outside it")
    assert sorted(p.name for p in (repo / ".git" / "hooks").iterdir()) == ["pre-commit.sample"]
    assert sorted(p.name for p in (bare / "hooks").iterdir()) == [] and not (bare / "objects" / "new").exists()


def _partial(folder, name, age=3600.0, ours=True):
    path = folder / name
    path.mkdir(parents=True)
    (path / "half").write_text("x")
    if ours:  # toolgate's sentinel: a folder without it is the user's, whatever its name
        (path / SENTINEL).write_bytes(b"")
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_temporary_folders_of_killed_commands_are_cleaned_and_never_named(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    killed = [_partial(tmp_path, ".out.abcd_123.partial"), _partial(out, ".sub.zz99zz99.partial")]
    young = _partial(tmp_path, ".out.young123.partial", age=0)  # may be one just made, not yet locked
    live = _partial(tmp_path, ".out.live1234.partial")
    lock = os.open(live, os.O_RDONLY)
    fcntl.flock(lock, fcntl.LOCK_EX)  # its command still runs
    others = [_partial(tmp_path, ".other.abcd1234.partial"), _partial(tmp_path, ".out.partial"),
              _partial(tmp_path, ".out.abcd1234.partial.bak"),
              _partial(tmp_path, ".out.backup12.partial", ours=False)]  # the user's .backup folder of that shape
    try:
        assert _put(out, {"a": "1"}) == "new"  # the killed one inside was cleaned: the folder counted as empty
        assert not any(p.exists() for p in killed) and young.is_dir() and live.is_dir() and all(p.is_dir() for p in others)
        inside = _partial(out, ".sub.live5678.partial")
        held = os.open(inside, os.O_RDONLY)
        fcntl.flock(held, fcntl.LOCK_EX)
        (out / RECORD).unlink()
        with pytest.raises(InputError) as e:
            _put(out, {"a": "1"})
        assert "(e.g. a)" in str(e.value) and "partial" not in str(e.value) and inside.is_dir()
        os.close(held)
    finally:
        os.close(lock)
    assert _put(tmp_path / "new", {"a": "1"}) == "new" and live.is_dir()  # another folder's: not ours to clean


@pytest.mark.parametrize("umask, folder, file", [(0o022, 0o755, 0o644), (0o077, 0o700, 0o600)])
def test_exported_and_imported_folders_take_the_users_umask(tmp_path, umask, folder, file):
    """Like any other folder the user makes, not the temporary folder's 0700: another user may read a router."""
    code = ("import sys; from pathlib import Path; from router_fixtures import make_artifact; from toolgate.cli import "
            "main; make_artifact(Path(sys.argv[1]), real_gate=False); sys.exit(main(sys.argv[2:]))")
    subprocess.run([sys.executable, "-c", code, str(tmp_path), *_import(tmp_path / "imported")], umask=umask,
                   env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, capture_output=True, check=True)
    for out in (tmp_path / "router", tmp_path / "imported"):
        assert stat.S_IMODE(out.stat().st_mode) == folder
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
        assert RECORD in modes and set(modes.values()) == {file}, modes


def _forge(out, names, marker="router.json"):
    """A hand-written record of format toolgate-owned/1 listing each of ``names`` with its real sha256."""
    files = {n: [hashlib.sha256((out / n).read_bytes()).hexdigest()] for n in names}
    (out / RECORD).write_text(json.dumps({"format": "toolgate-owned/1", "marker": marker, "files": files}))


def test_a_forged_record_never_gets_a_user_file_deleted(tmp_path, monkeypatch):
    """Repro 1: report.docx, data.csv, a router.json of {} and a forged record listing each with its real sha256:
    `export --force` exited 0 and deleted both files. Only the format's fixed names are believed, and only with a
    marker that lists the recorded files."""
    out = tmp_path / "router"
    out.mkdir()
    (out / "report.docx").write_bytes(b"PK report")
    (out / "data.csv").write_text("a,b\n1,2\n")
    (out / "router.json").write_text("{}")
    _forge(out, ["report.docx", "data.csv", "router.json"])
    before = _files(out)
    monkeypatch.setattr(router_fixtures, "export_router", functools.partial(export_router, force=True))
    with pytest.raises(InputError, match=r"\.toolgate-owned\.json: names data\.csv, which toolgate never writes") as e:
        make_artifact(tmp_path, real_gate=False)
    assert "\n" not in str(e.value) and _files(out) == before
    _forge(out, ["router.json"])  # the fixed name alone: its content is no marker toolgate writes
    with pytest.raises(InputError, match=r"router/router\.json: does not give the sha256 of each file \.toolgate-owned\.json records"):
        make_artifact(tmp_path, real_gate=False)
    (out / "router.json").write_text(json.dumps({"files": {"report.docx": {}}}))
    _forge(out, ["router.json"])
    with pytest.raises(InputError, match="does not give the sha256 of each file"):
        make_artifact(tmp_path, real_gate=False)
    assert {n for n in _files(out) if n != RECORD} == {"report.docx", "data.csv", "router.json"}
    assert (out / "report.docx").read_bytes() == b"PK report" and sorted(tmp_path.glob(".router.*")) == []


def test_a_forged_record_of_fixed_names_never_gets_a_user_file_replaced(tmp_path):
    """The probe run's repro: the user's own catalog.jsonl, a router.json listing it by name and a forged record
    with both real digests: `adapt --force` replaced the user's catalog. The marker must give each file's sha256."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / "catalog.jsonl").write_text("my own catalog\n")
    (out / "router.json").write_text(json.dumps({"files": ["catalog.jsonl"]}))
    _forge(out, ["catalog.jsonl", "router.json"])
    before = _files(out)
    router = make_artifact(tmp_path, real_gate=False)
    assert main(["adapt", str(router), "--catalog", str(tmp_path / "catalog.jsonl"), "--out", str(out), "--force"]) == 2
    assert _files(out) == before


def _across_devices(monkeypatch, code):
    """os.rename and os.replace fail with ``code`` between two folders, as into a mount point (a container volume)."""
    for name in ("rename", "replace"):
        real = getattr(os, name)

        def move(src, dst, real=real):
            if os.path.dirname(os.path.abspath(src)) != os.path.dirname(os.path.abspath(dst)):
                raise OSError(code, os.strerror(code), str(src), None, str(dst))
            return real(src, dst)
        monkeypatch.setattr(outdir.os, name, move)


@pytest.mark.parametrize("code", [errno.EXDEV, errno.EBUSY])
def test_a_mount_point_is_written_by_copies(tmp_path, monkeypatch, code):
    """Exporting into a mount point failed with "Device or resource busy", and with --force "Invalid cross-device
    link": each file is now copied beside its place and renamed onto it."""
    out = tmp_path / "volume"
    out.mkdir()
    _across_devices(monkeypatch, code)
    assert _put(out, {"a": "1", "b": "1"}) == "new"
    (out / "notes.txt").write_text("mine")
    assert _put(out, {"a": "2"}, force=True) == "replaced"
    assert {n: p.read_text() for n, p in ((p.name, p) for p in out.iterdir()) if n != RECORD} == {
        "a": "2", "m.json": json.dumps({"files": {"a": {"sha256": _sha(out / "a")}}}), "notes.txt": "mine"}
    assert _put(out, {"a": "3"}, force=True) == "replaced"  # the record written by copy verifies
    assert sorted(p.name for p in tmp_path.iterdir()) == ["volume"] and not list(out.glob("*.partial"))


def test_messages_name_the_final_folder_never_the_temporary_one(tmp_path):
    """.partial folder names leaked into error messages: the folder they name is gone when the message is read."""
    def unwritable(tmp):
        raise PermissionError(13, "Permission denied", str(tmp / "a"))

    def invalid(tmp):
        raise InputError(tmp / "m.json", f"bad line in {tmp / 'm.json'}", line=3)

    def failing(tmp):
        raise OSError(f"{tmp} is not a regular file")
    out = tmp_path / "out"
    for write in (unwritable, invalid, failing):
        with pytest.raises((InputError, OSError)) as e:
            write_folder(out, NAMES, write)
        assert "partial" not in str(e.value) and str(out) in str(e.value)
    assert list(tmp_path.iterdir()) == []
