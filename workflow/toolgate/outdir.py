"""Folders a command writes (``export --out``, ``import --out``): never destroy, never overwrite silently.

A folder is written whole into a locked temporary sibling and renamed into place; ``force`` replaces only the files
toolgate's record (``.toolgate-owned.json``) says it wrote. docs/router.md, 'The artifact', gives the rules.
"""
from __future__ import annotations

import errno
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

from .core import io
from .core.errors import InputError

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


def _vouches(out: Path, marker: str, files: dict) -> bool:
    """Whether the marker in ``out`` is a JSON object whose ``files`` gives some of the recorded files but itself,
    each with a sha256 the record holds for it (``{name: {"sha256": ...}}``), as toolgate's markers do. A record
    beside a marker of another form (a name list, ``{}``) is never believed (a marker already gone passes)."""
    try:
        with _open_regular(out / marker) as fh:
            listed = json.load(fh).get("files")
    except FileNotFoundError:
        return True
    except (OSError, ValueError, RecursionError, AttributeError):
        return False
    names = set(files) - {marker}
    return (isinstance(listed, dict) and bool(listed) and set(listed) <= names
            and all(isinstance(e, dict) and e.get("sha256") in files[n] for n, e in listed.items()))


def recorded_files(out: Path, names: tuple[str, ...]) -> dict[str, list[str]] | None:
    """The files a previous artifact of the format whose fixed file names are ``names`` (its marker last) recorded
    in ``out`` (name -> the digests it may have), verified on disk; None when ``out`` holds no record. A record that
    does not verify raises InputError with the reason."""
    path, marker = out / RECORD, names[-1]

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
    foreign = sorted(set(files) - set(names))
    if foreign:
        refuse(path, f"names {foreign[0]}, which toolgate never writes beside {marker}: not a record toolgate wrote")
    for name, digests in files.items():
        try:
            if _sha256(out / name) not in digests:
                refuse(out / name, f"changed since toolgate wrote it (its sha256 is not the one {RECORD} records)")
        except FileNotFoundError:
            continue  # already gone: nothing to replace
        except OSError:
            refuse(out / name, "is not a regular file (a symlink or a folder), which toolgate never writes")
    if not _vouches(out, marker, files):
        refuse(out / marker, f"does not give the sha256 of each file {RECORD} records (toolgate's {marker} gives the "
                             "files it wrote with their digests)")
    return files


def _move(src: Path, dst: Path) -> None:
    """``src`` renamed onto ``dst``; where a rename cannot cross (another file system, a mount point), copied to a
    temporary file beside ``dst`` and that renamed onto it, so ``dst`` still changes at once."""
    try:
        os.replace(src, dst)
        return
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EBUSY):
            raise
    fd, part = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=".partial", dir=dst.parent)
    try:
        with os.fdopen(fd, "wb") as to, open(src, "rb") as fh:
            shutil.copyfileobj(fh, to)
        os.chmod(part, stat.S_IMODE(os.stat(src).st_mode))
        os.replace(part, dst)
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise


def _named_finally(exc: Exception, tmp: Path, out: Path) -> Exception:
    """``exc`` naming ``out`` where it named the temporary folder ``tmp``, which is gone when the message is read."""
    def fix(text):
        return text if text is None else str(text).replace(str(tmp), str(out))
    if isinstance(exc, InputError):
        return InputError(fix(exc.path), fix(exc.message), exc.line, exc.field)
    if exc.filename is None:
        return type(exc)(fix(exc))
    return type(exc)(exc.errno, exc.strerror, fix(exc.filename), None, fix(exc.filename2))


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


def write_folder(out, names: tuple[str, ...], write: Callable[[Path], None], force: bool = False,
                 option: str = "--out", allowed_output: str | None = None) -> str:
    """Run ``write(tmp)`` in a fresh temporary folder, then move its files into ``out`` with toolgate's record.

    ``names``: the fixed file names of the artifact's format, its marker last; ``write`` writes some of them, no
    other. Returns ``"new"``, ``"replaced"`` (a previous artifact's recorded files were replaced or removed) or
    ``"beside"`` (written among a user's files).
    """
    out, marker = Path(out), names[-1]
    if out.exists() and not out.is_dir():
        raise InputError(out, f"exists and is not a folder; {option} must name a folder")
    check_place(out, option, allowed_output)
    if out.parent.is_dir():
        _clean_partials(out.parent, re.compile(rf"\.{re.escape(out.name)}{PARTIAL}"))
    if out.is_dir():
        _clean_partials(out, ANY_PARTIAL)
    present = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    previous = recorded_files(out, names) if present else None
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
        return _place(out, names, write, (tmp, record, present), option)
    except (InputError, OSError) as exc:
        raise _named_finally(exc, tmp, out) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        os.close(lock)


def _place(out: Path, names: tuple[str, ...], write, staged: tuple, option: str) -> str:
    """:func:`write_folder`'s writing and moving, ``staged``: (the temporary folder, a function writing the record
    there, the names ``out`` held before)."""
    (tmp, record, present), marker = staged, names[-1]
    write(tmp)
    new = {p.name: [_sha256(p)] for p in sorted(tmp.iterdir()) if p.name != SENTINEL}
    if set(new) - set(names):
        raise ValueError(f"wrote {sorted(set(new) - set(names))}, not files of the {marker} format")
    last = sorted(new, key=lambda n: n == marker)  # the marker last: it names the files now present
    if not present:
        record(new)
        (tmp / SENTINEL).unlink()
        os.chmod(tmp, 0o777 & ~io._UMASK)  # private (mkdtemp's 0700) while written; then any folder's mode
        try:
            os.rename(tmp, out)  # the folder appears whole or not at all (an empty one is replaced)
        except OSError as exc:  # a mount point: the files one by one, the record first (a kill leaves one)
            if exc.errno not in (errno.EXDEV, errno.EBUSY):
                raise
            for name in [RECORD, *last]:
                _move(tmp / name, out / name)
        return "new"
    previous = recorded_files(out, names) or {}  # again: a file may have changed while write() ran
    clash = sorted(set(new) & set(present) - set(previous))
    if clash:
        raise InputError(out / clash[0], f"exists and toolgate has no record of writing it; {option} with --force "
                                         "never replaces it: move it or choose another folder")
    # Until the final record, each file may hold its old or its new content: a kill leaves a record that verifies.
    record({n: sorted({*previous.get(n, ()), *new.get(n, ())}) for n in {*previous, *new}})
    _move(tmp / RECORD, out / RECORD)
    for name in names:  # the format's own names, never one read from the folder
        if name in previous and name not in new:
            (out / name).unlink(missing_ok=True)
    for name in last:
        _move(tmp / name, out / name)
    record(new)
    _move(tmp / RECORD, out / RECORD)
    return "replaced" if previous else "beside"
