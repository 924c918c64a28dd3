"""Folders a command writes (``export --out``, ``import --out``): never destroy, never overwrite silently.

Every artifact folder holds a marker file (``router.json``, ``import.json``) that lists the files the
command wrote. A new folder is written whole into a temporary sibling and renamed into place. An
existing folder is refused unless it is empty; ``force`` replaces a previous artifact of the same
kind, touching only the files its marker recorded (the user's other files stay), or writes beside a
user's files when no name clashes. Some places are never written: a git work tree's root, the
current folder or one above it, and a workflow's ``results/`` or ``figures/`` (outputs only; an
exported router may live under ``results/<experiment>/router/``, where the workflow puts it).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from .errors import InputError

OUTPUT_FOLDERS = ("results", "figures")  # a workflow's outputs, beside its Snakefile


def _workflow_outputs(out: Path) -> Path | None:
    """The ``results/`` or ``figures/`` folder of a workflow that ``out`` lies in, if any."""
    for folder in (out, *out.parents):
        if folder.name in OUTPUT_FOLDERS and (folder.parent / "Snakefile").is_file():
            return folder
    return None


def check_place(out: Path, option: str, allowed_output: str | None = None) -> None:
    """Refuse a folder that must never be written: git root, current folder or above, workflow outputs.

    ``allowed_output``: the one sub-folder of ``results/<experiment>/`` the command may write into.
    """
    real, cwd = out.resolve(), Path.cwd().resolve()
    if (real / ".git").exists():
        raise InputError(out, f"is the root of a git work tree; {option} must name a folder of its own")
    if real == cwd or real in cwd.parents:
        raise InputError(out, f"is the current folder or one above it; {option} must name a folder of its own")
    outputs = _workflow_outputs(real)
    if outputs is not None:
        parts = real.relative_to(outputs).parts
        if not (allowed_output and outputs.name == "results" and len(parts) >= 3 and parts[1] == allowed_output):
            where = f"; only results/<experiment>/{allowed_output}/ is" if allowed_output else ""
            raise InputError(out, f"lies in the workflow's {outputs.name}/ folder, which holds workflow outputs "
                                  f"only{where}; {option} must name another folder")


def recorded_files(out: Path, marker: str, listed: Callable[[dict], list[str]]) -> list[str] | None:
    """The files a previous artifact in ``out`` recorded (marker included), or None when it holds none."""
    path = out / marker
    if not path.is_file():
        return None
    try:
        names = [*listed(json.loads(path.read_text(encoding="utf-8"))), marker]
    except (ValueError, TypeError, KeyError, AttributeError):  # unreadable marker: not ours to replace
        return None
    return [n for n in names if isinstance(n, str) and Path(n).name == n]


def write_folder(out, marker: str, listed: Callable[[dict], list[str]], write: Callable[[Path], None],
                 force: bool = False, option: str = "--out", allowed_output: str | None = None) -> str:
    """Run ``write(tmp)`` in a fresh temporary folder, then move its files into ``out``.

    ``listed(marker_json)``: the files an artifact's marker records. Returns ``"new"``, ``"replaced"`` (a previous
    artifact's recorded files were replaced or removed) or ``"beside"`` (written among a user's files).
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(out, f"exists and is not a folder; {option} must name a folder")
    check_place(out, option, allowed_output)
    present = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    previous = recorded_files(out, marker, listed) if present else None
    if present and not force:
        what = (f"holds an earlier {marker} artifact" if previous is not None
                else f"exists and holds files toolgate did not write (e.g. {present[0]})")
        raise InputError(out, f"{what}; choose a new or empty folder, or add --force (which replaces only the "
                              f"files a {marker} in the folder records, never other files)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    try:
        write(tmp)
        if not present:
            if out.is_dir():
                out.rmdir()
            os.rename(tmp, out)  # the folder appears whole or not at all
            return "new"
        new = sorted(p.name for p in tmp.iterdir())
        clash = sorted(set(new) & set(present) - set(previous or ()))
        if clash:
            raise InputError(out / clash[0], f"exists and was not written by toolgate; {option} with --force "
                                             "never replaces it: move it or choose another folder")
        for name in sorted(set(previous or ()) - set(new)):
            (out / name).unlink(missing_ok=True)
        for name in sorted(new, key=lambda n: n == marker):  # the marker last: it names the files now present
            os.replace(tmp / name, out / name)
        return "replaced" if previous is not None else "beside"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
