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

import hashlib
import logging
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path

from ..errors import InputError

log = logging.getLogger(__name__)

DEFAULT_MIRROR = Path("../shared/external")
DEFAULT_CACHE = Path("results/cache/external")
ENV_MIRROR = "TOOLGATE_EXTERNAL"
ENV_CACHE = "TOOLGATE_EXTERNAL_CACHE"

# Pinned sources (from each dataset's SOURCE file) and the sha256 of every file used.
PINS = {
    "functionchat": {
        "repo": "kakao/FunctionChat-Bench",
        "commit": "cb32af378a2b94ee84fc4d3cb50302377c7ff679",
        "path": "data",
        "files": {
            "FunctionChat-Singlecall.jsonl": "3f74ed04cb9f1e0b6bc16845e5b6c69a3e75363f084b00825c9794df071a4aaf",
            "FunctionChat-CallDecision.jsonl": "7fe66417cd82a6d40741d4f3d850c9ecb80df192819564303bdad226db5d1625",
        },
    },
    "bfcl": {
        "repo": "ShishirPatil/gorilla",
        "commit": "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8",
        "path": "berkeley-function-call-leaderboard/bfcl_eval/data",
        "files": {
            "BFCL_v4_multiple.json": "aef168155ebd74b7ac2401198b201343bc7d16d7a3d7e0d4e6d8ee82c6969b2a",
            "BFCL_v4_live_multiple.json": "fd8ccfad4d911420d0e3341dbe2fff77d1d341da934248b9bb2bda24ab3a10c8",
            "BFCL_v4_irrelevance.json": "2b6ed4c2e992cdcf5f1678a701851f944bef7550ee026ed1ddb89efed5be01a6",
            "BFCL_v4_live_irrelevance.json": "6559fda2beaceb609a2cd2e504c65b4a56cb448e1ef88fddfd199e163d163349",
            "possible_answer/BFCL_v4_multiple.json": "244e00ce9395df948bcafc7bee64e8f9c87ef70887587d83cae45b13699f3047",
            "possible_answer/BFCL_v4_live_multiple.json": "97e90d59c5bd76c55a2920ce93e5566e9046307d3f558578f085f9d3a56c3084",
        },
    },
}


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
            raise ExternalDataUnavailable(
                name, f"external dataset '{name}' is not available: no local mirror at {local} "
                      f"(set config external.mirror or ${ENV_MIRROR} to a folder that holds '{name}/'), "
                      f"and downloading the pinned file {url(name, file)} into {folder} failed "
                      f"({type(exc).__name__}: {exc})") from None
    return folder
