"""Where the external data comes from: pinned files, a local mirror, else a verified download.

A dataset lives in ``<mirror>/<name>``; the mirror is the config's
``external.mirror``, else ``$TOOLGATE_EXTERNAL``, else ``../shared/external``
relative to the working directory (the repository root when Snakemake runs).
Without that folder the pinned files are downloaded from the public repository
at the pinned commit into a cache folder (``$TOOLGATE_EXTERNAL_CACHE``, else
``results/cache/external``). Every file, mirrored or downloaded, must match its
pinned sha256, so the numbers cannot drift with upstream edits; the data never
enters the repository.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path

from ..core.errors import InputError
from ..data.sources import PINS

log = logging.getLogger(__name__)

DEFAULT_MIRROR = Path("../shared/external")
DEFAULT_CACHE = Path("results/cache/external")
ENV_MIRROR = "TOOLGATE_EXTERNAL"
ENV_CACHE = "TOOLGATE_EXTERNAL_CACHE"

class ExternalDataUnavailable(InputError):
    """Neither a local mirror nor a download gave the dataset."""


def url(name: str, file: str) -> str:
    """Raw download URL of one pinned file."""
    pin = PINS[name]
    return f"https://raw.githubusercontent.com/{pin['repo']}/{pin['commit']}/{pin['path']}/{file}"


def sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(folder, name: str, files=None) -> None:
    """Check the pinned sha256 of ``files`` (default: all pinned files) under ``folder``."""
    folder = Path(folder)
    for file in files or PINS[name]["files"]:
        path = folder / file
        if not path.is_file():
            raise InputError(path, f"missing file of external dataset '{name}' (pinned: {url(name, file)})")
        got, want = sha256(path), PINS[name]["files"][file]
        if got != want:
            raise InputError(path, f"sha256 mismatch: expected {want}, got {got} "
                                   f"(not the file of {PINS[name]['repo']}@{PINS[name]['commit'][:12]})")


def _download(source: str, dest: Path, timeout: float = 60) -> None:
    """Fetch ``source`` into ``dest`` (tests replace this function)."""
    with urllib.request.urlopen(source, timeout=timeout) as resp, open(dest, "wb") as fh:
        shutil.copyfileobj(resp, fh)


def mirror_root(mirror=None) -> Path:
    """The mirror folder in effect: argument, else $TOOLGATE_EXTERNAL, else ../shared/external."""
    return Path(mirror or os.environ.get(ENV_MIRROR) or DEFAULT_MIRROR)


def _fetch(name: str, file: str, dest: Path) -> None:
    """Download one pinned file to ``dest`` through a temporary file, so a failure leaves nothing behind."""
    source = url(name, file)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    os.close(fd)
    try:
        log.info("downloading %s", source)
        _download(source, Path(tmp))
        got = sha256(tmp)
        if got != PINS[name]["files"][file]:
            raise InputError(source, f"sha256 mismatch: expected {PINS[name]['files'][file]}, got {got}")
        os.replace(tmp, dest)
    finally:
        Path(tmp).unlink(missing_ok=True)


def locate(name: str, mirror=None, cache=None, files=None) -> Path:
    """The folder holding dataset ``name`` ("functionchat" or "bfcl"), its pinned files verified.

    ``mirror/<name>`` when it exists; otherwise the cache folder, downloading any
    pinned file not already there (only then is the network touched).
    """
    if name not in PINS:
        raise ValueError(f"unknown external dataset '{name}' (known: {', '.join(PINS)})")
    files = list(files or PINS[name]["files"])
    local = mirror_root(mirror) / name
    if local.is_dir():
        verify(local, name, files)
        return local
    folder = Path(cache or os.environ.get(ENV_CACHE) or DEFAULT_CACHE) / name
    for file in files:
        dest = folder / file
        if dest.is_file() and sha256(dest) == PINS[name]["files"][file]:
            continue
        try:
            _fetch(name, file, dest)
        except InputError:
            raise
        except Exception as exc:  # network, permissions, HTTP errors
            with contextlib.suppress(OSError):  # the folder _fetch made, when nothing came into it
                folder.rmdir()
            raise ExternalDataUnavailable(
                name, f"external dataset '{name}' is not available: no local mirror at {local} "
                      f"(set config external.mirror or ${ENV_MIRROR} to a folder that holds '{name}/'), "
                      f"and downloading the pinned file {url(name, file)} into {folder} failed "
                      f"({type(exc).__name__}: {exc})") from None
    return folder
