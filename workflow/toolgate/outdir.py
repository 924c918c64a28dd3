"""Folders a command writes (``export --out``, ``import --out``): never destroy, never overwrite silently.

Every artifact folder holds a marker file (``router.json``, ``import.json``) and, hidden beside it, toolgate's
record of what it wrote there (``.toolgate-owned.json``: the marker's name and the sha256 of each file it wrote,
the marker included). The record lives apart so that the marker stays as the command wrote it (an exported
router.json is deterministic and readable). A new folder is written whole into a temporary sibling
(``.<name>.XXXXXXXX.partial``) and renamed into place.

An existing folder is refused unless it is empty. ``force`` replaces a previous artifact of the same kind only
when its record verifies: each recorded name a plain file name, and each such file still in the folder a regular
file (never a symlink) with a recorded digest (a file already gone is fine: snakemake clears an export's
declared outputs before a rerun). Then only the recorded files are replaced or removed, one by one under an
interim record that accepts each file's old or new content (a kill midway leaves a record that verifies); the
user's other files stay. A record that does not verify (unreadable, not toolgate's, of another kind, a file changed since) is
refused with the reason and nothing is touched. Without a record, ``force`` writes beside the folder's files
when no name clashes (a foreign marker clashes, so it and what it lists are never touched).

A temporary folder is locked (``flock``) while its command runs. One left by a killed command (its name in the
pattern above, unlocked, untouched for ``STALE_AFTER`` seconds) is removed by the next command writing the same
folder (beside it, or inside it for its sub-folders); such folders are never named in messages.

Some places are never written: a git work tree's root or anything inside a git folder (``.git``, a bare
repository), the current folder or one above it, and a workflow's ``results/`` or ``figures/`` (outputs only;
an exported router may live under ``results/<experiment>/router/``, where the workflow puts it).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path
from typing import Callable

from . import io
from .errors import InputError

OUTPUT_FOLDERS = ("results", "figures")  # a workflow's outputs, beside its Snakefile
RECORD = ".toolgate-owned.json"  # what toolgate wrote in a folder: {"format", "marker", "files": {name: [sha256]}}
RECORD_FORMAT = "toolgate-owned/1"
PARTIAL = r"\.[a-z0-9_]{8}\.partial"  # after ".<folder name>": tempfile.mkdtemp's random part, then our suffix
SENTINEL = ".toolgate-partial"  # in every temporary folder while it is written: only such folders are ever cleaned
ANY_PARTIAL = re.compile(rf"\..+{PARTIAL}")
STALE_AFTER = 10  # seconds: an unlocked temporary folder younger than this may be one made but not yet locked
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _workflow_outputs(out: Path) -> Path | None:
    """The ``results/`` or ``figures/`` folder of a workflow that ``out`` lies in, if any."""
    for folder in (out, *out.parents):
        if folder.name in OUTPUT_FOLDERS and (folder.parent / "Snakefile").is_file():
            return folder
    return None


def _git_folder(out: Path) -> Path | None:
    """The git folder (``.git``, or a bare repository's) that ``out`` is or lies in, if any."""
    for folder in (out, *out.parents):
        if folder.name == ".git" or ((folder / "HEAD").is_file() and (folder / "objects").is_dir()
                                     and (folder / "refs").is_dir()):
            return folder
    return None


def check_place(out: Path, option: str, allowed_output: str | None = None) -> None:
    """Refuse a folder that must never be written: git root or inside, current folder or above, workflow outputs.

    ``allowed_output``: the one sub-folder of ``results/<experiment>/`` the command may write into.
    """
    real, cwd = out.resolve(), Path.cwd().resolve()
    if (real / ".git").exists():
        raise InputError(out, f"is the root of a git work tree; {option} must name a folder of its own")
    if real == cwd or real in cwd.parents:
        raise InputError(out, f"is the current folder or one above it; {option} must name a folder of its own")
    git = _git_folder(real)
    if git is not None:
        raise InputError(out, f"lies in the git folder {git} (hooks, objects); {option} must name a folder outside it")
    outputs = _workflow_outputs(real)
    if outputs is not None:
        parts = real.relative_to(outputs).parts
        if not (allowed_output and outputs.name == "results" and len(parts) >= 3 and parts[1] == allowed_output):
            where = f"; only results/<experiment>/{allowed_output}/ is" if allowed_output else ""
            raise InputError(out, f"lies in the workflow's {outputs.name}/ folder, which holds workflow outputs "
                                  f"only{where}; {option} must name another folder")


def _open_regular(path: Path):
    """``path`` opened for reading if it is a regular file, never through a symlink (OSError otherwise)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # NONBLOCK: a FIFO must not hang the check
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        fh.close()
        raise OSError(f"{path} is not a regular file")
    return fh


def _sha256(path: Path) -> str:
    """A regular file's sha256 (OSError for anything else, FileNotFoundError when there is none)."""
    with _open_regular(path) as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _plain(name) -> bool:
    """A file name directly inside a folder: no path, no '.' or '..', not the record itself, printable."""
    return (isinstance(name, str) and name not in ("", ".", "..", RECORD) and name.isprintable()
            and "/" not in name and "\\" not in name)


def _digests(value) -> bool:
    """A record's digests of one file: a non-empty list of sha256 hex strings."""
    return isinstance(value, list) and bool(value) and all(isinstance(x, str) and _SHA256.fullmatch(x) for x in value)


def recorded_files(out: Path, marker: str) -> dict[str, list[str]] | None:
    """The files a previous ``marker`` artifact in ``out`` recorded (name -> the digests it may have), verified on
    disk; None when ``out`` holds no record. A record that does not verify raises InputError with the reason."""
    path = out / RECORD

    def refuse(where, why: str):
        raise InputError(where, f"{why}; --force replaces only unchanged files toolgate recorded writing: move it "
                                "or choose another folder")
    if not os.path.lexists(path):
        return None
    try:
        with _open_regular(path) as fh:
            record = json.load(fh)
    except (OSError, ValueError, RecursionError):  # ValueError: bad JSON or UTF-8, an integer over 4,300 digits
        record = None
    files = record.get("files") if isinstance(record, dict) else None
    if not (isinstance(files, dict) and record.get("format") == RECORD_FORMAT and _plain(record.get("marker"))
            and record["marker"] in files and all(_plain(n) and _digests(d) for n, d in files.items())):
        refuse(path, f"is not a record toolgate wrote (a regular file of format {RECORD_FORMAT})")
    if record["marker"] != marker:
        raise InputError(out, f"holds a toolgate {record['marker']} artifact, not a {marker} one; choose another folder")
    for name, digests in files.items():
        try:
            if _sha256(out / name) not in digests:
                refuse(out / name, f"changed since toolgate wrote it (its sha256 is not the one {RECORD} records)")
        except FileNotFoundError:
            continue  # already gone: nothing to replace
        except OSError:
            refuse(out / name, "is not a regular file (a symlink or a folder), which toolgate never writes")
    return files


def _stale(path: Path) -> bool:
    """Whether ``path`` is a temporary folder its command left: a real folder, not locked, not just made."""
    try:
        if time.time() - path.lstat().st_mtime < STALE_AFTER:
            return False
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while the command that made it still runs
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _clean_partials(folder: Path, pattern: re.Pattern) -> None:
    """Remove the temporary folders (names matching ``pattern``, holding toolgate's sentinel) that killed commands left
    in ``folder``; a user's folder of a matching name but without the sentinel is never touched."""
    for path in folder.iterdir():
        if pattern.fullmatch(path.name) and (path / SENTINEL).is_file() and _stale(path):
            shutil.rmtree(path, ignore_errors=True)


def write_folder(out, marker: str, write: Callable[[Path], None], force: bool = False, option: str = "--out",
                 allowed_output: str | None = None) -> str:
    """Run ``write(tmp)`` in a fresh temporary folder, then move its files into ``out`` with toolgate's record.

    Returns ``"new"``, ``"replaced"`` (a previous artifact's recorded files were replaced or removed) or
    ``"beside"`` (written among a user's files).
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(out, f"exists and is not a folder; {option} must name a folder")
    check_place(out, option, allowed_output)
    if out.parent.is_dir():
        _clean_partials(out.parent, re.compile(rf"\.{re.escape(out.name)}{PARTIAL}"))
    if out.is_dir():
        _clean_partials(out, ANY_PARTIAL)
    present = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    previous = recorded_files(out, marker) if present else None
    if present and not force:
        theirs = [n for n in present if not ANY_PARTIAL.fullmatch(n)]
        what = (f"holds an earlier {marker} artifact" if previous is not None
                else f"exists and holds files toolgate did not write (e.g. {theirs[0]})" if theirs
                else "is being written by another toolgate command")
        raise InputError(out, f"{what}; choose a new or empty folder, or add --force (which replaces only the "
                              f"files toolgate recorded writing there, never other files)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    lock = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(lock, fcntl.LOCK_EX)  # in use: no other command takes it for one a killed command left
    (tmp / SENTINEL).write_bytes(b"")

    def record(files: dict) -> None:
        io.write_json(tmp / RECORD, {"format": RECORD_FORMAT, "marker": marker, "files": files})
    try:
        write(tmp)
        new = {p.name: [_sha256(p)] for p in sorted(tmp.iterdir()) if p.name != SENTINEL}
        if not present:
            record(new)
            if out.is_dir():
                out.rmdir()
            (tmp / SENTINEL).unlink()
            os.chmod(tmp, 0o777 & ~io._UMASK)  # private (mkdtemp's 0700) while written; then any folder's mode
            os.rename(tmp, out)  # the folder appears whole or not at all
            return "new"
        previous = recorded_files(out, marker) or {}  # again: a file may have changed while write() ran
        clash = sorted(set(new) & set(present) - set(previous))
        if clash:
            raise InputError(out / clash[0], f"exists and toolgate has no record of writing it; {option} with --force "
                                             "never replaces it: move it or choose another folder")
        # Until the final record, each file may hold its old or its new content: a kill leaves a record that verifies.
        record({n: sorted({*previous.get(n, ()), *new.get(n, ())}) for n in {*previous, *new}})
        os.replace(tmp / RECORD, out / RECORD)
        for name in sorted(set(previous) - set(new)):
            (out / name).unlink(missing_ok=True)
        for name in sorted(new, key=lambda n: n == marker):  # the marker last: it names the files now present
            os.replace(tmp / name, out / name)
        record(new)
        os.replace(tmp / RECORD, out / RECORD)
        return "replaced" if previous else "beside"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        os.close(lock)
