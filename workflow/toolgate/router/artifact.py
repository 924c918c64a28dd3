"""A router artifact on disk: the manifest checked, every file against its checksum, the catalog embeddings against
the encoder that reads them.

Every problem raises :class:`RouterError` with a one-line message naming the file and, where there is one, the
field; nothing is silently bent or re-computed: embeddings made by another encoder revision or of other catalog
texts are refused, never re-encoded.
"""
from __future__ import annotations

import hashlib
import io as _io
import json
import zipfile
from pathlib import Path

import numpy as np

from .. import __version__, schemas
from ..errors import InputError, MissingExtra
from ..gate.signals import registry
from ..retrieval.encoders import ModelUnavailable, make_encoder, offline_problem
from ..retrieval.rankers import encoder_kwargs
from .gates import EMBEDDINGS, texts_sha256

FORMAT = 2
MANIFEST = "router.json"


class RouterError(ValueError):
    """A router artifact or an input the router refuses; the message says which and why."""


def json_type(obj) -> str:
    """The JSON name of a parsed value's type (for messages about what a line or field holds)."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(obj), "a number")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_entry(data: bytes) -> dict:
    return {"bytes": len(data), "sha256": sha256(data)}


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """``arrays`` as an .npz archive, byte for byte the same for the same arrays (no timestamps)."""
    buf = _io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name in sorted(arrays):
            one = _io.BytesIO()
            np.save(one, arrays[name], allow_pickle=False)
            zf.writestr(zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0)), one.getvalue())
    return buf.getvalue()


def _no_constant(name: str):
    raise ValueError(f"{name} is not a finite number")


def read_manifest(folder: Path) -> dict:
    """The manifest of ``folder``, checked against ``router.schema.yaml`` and the rules the schema cannot say."""
    path = folder / MANIFEST
    if not path.is_file():
        raise RouterError(f"{folder}: no {MANIFEST}; export a router with `toolgate export`")
    try:
        m = json.loads(path.read_text(encoding="utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RouterError(f"{path}: not a router manifest ({exc})") from None
    if not isinstance(m, dict):
        raise RouterError(f"{path}: not a router manifest ({json_type(m)}, not an object)")
    if m.get("format") != FORMAT:
        raise RouterError(f"{path}: router format {m.get('format')!r}, this toolgate reads format {FORMAT}; "
                          "export the router again")
    if str(m.get("toolgate_version", "")).split(".")[0] != __version__.split(".")[0]:
        raise RouterError(f"{path}: exported by toolgate {m.get('toolgate_version')}, this is toolgate {__version__} "
                          "(another major version); export the router again")
    try:
        schemas.check_schema(path, None, m, "router")
    except InputError as exc:
        raise RouterError(str(exc)) from None
    th = m["thresholds"]
    if th["execute"] < th["confirm"]:
        raise RouterError(f"{path}: field 'thresholds': execute {th['execute']} is below confirm {th['confirm']}")
    _check_gate(path, m)
    for name, entry in m["encoders"].items():
        problem = offline_problem(entry["spec"]["encoder"])
        if problem:
            raise RouterError(f"{path}: field 'encoders.{name}.spec.encoder': {problem}; a router loads offline only")
    return m


def _check_gate(path: Path, m: dict) -> None:
    """A band names a gate of the registry its encoders can compute, with a payload of matching length."""
    p, gate = m["pipeline"], m["gate"]
    if (p["kind"] == "band") != (gate is not None) or (m["thresholds"]["scale"] == "probability") != (gate is not None):
        raise RouterError(f"{path}: field 'gate': a band has a gate and probability thresholds, the ladder neither")
    if gate is None:
        return
    encoders = [n for n in m["encoders"] if n != gate["lexical"]]
    if p["ranker"] not in (m["lexical"]["name"], *encoders):
        raise RouterError(f"{path}: field 'pipeline.ranker': '{p['ranker']}' is neither the lexical ranker nor an encoder")
    known = registry(gate["lexical"], encoders)
    fit = gate["payload"]
    needed = fit["features"] if fit else [gate["signal"]]
    unknown = [f for f in needed if f not in known or known[f].inputs]
    if unknown or (fit and len(fit["coef"]) != len(fit["features"])):
        raise RouterError(f"{path}: field 'gate.payload': " + (f"'{unknown[0]}' is not a raw signal of this router's "
                          "rankers" if unknown else "as many coefficients as features are needed"))


def checked_file(folder: Path, name: str, entry: dict) -> bytes:
    path = folder / name
    if not path.is_file():
        raise RouterError(f"{path}: missing from the router artifact")
    data = path.read_bytes()
    if len(data) != entry["bytes"] or sha256(data) != entry["sha256"]:
        raise RouterError(f"{path}: {len(data)} bytes with another checksum than the manifest's {entry['bytes']}: "
                          "the artifact is corrupted or truncated")
    return data


def load_encoders(folder: Path, m: dict, catalog: list[dict], threads: int | None):
    """({name: encoder}, {name: catalog embeddings}, {name: exemplar embeddings}) of the manifest's encoders.

    Each encoder must be the one the embeddings were made with (id and revision) and the catalog's index texts
    must hash to the recorded value; otherwise the router is refused (export it again), never re-encoded."""
    if not m["encoders"]:
        return {}, {}, {}
    data = checked_file(folder, EMBEDDINGS, m["files"][EMBEDDINGS])
    try:
        arrays = dict(np.load(_io.BytesIO(data), allow_pickle=False))
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise RouterError(f"{folder / EMBEDDINGS}: unreadable ({exc})") from None
    encoders, docs, exemplars = {}, {}, {}
    for name, entry in m["encoders"].items():
        spec = entry["spec"]
        where = f"{folder / MANIFEST}: field 'encoders.{name}'"
        if texts_sha256(catalog, spec["variant"], tuple(m["langs"])) != entry["texts_sha256"]:
            raise RouterError(f"{where}: the catalog embeddings are of other index texts; export the router again")
        kwargs = encoder_kwargs({**spec["encoder"], **({"threads": threads} if threads else {})})
        try:
            enc = make_encoder(kwargs)
        except (ModelUnavailable, MissingExtra) as exc:
            raise RouterError(f"{folder}: the router's encoder does not load: {exc}") from None
        if enc.key != entry["key"]:
            raise RouterError(f"{where}: the catalog embeddings were made by {entry['key']}, this encoder is "
                              f"{enc.key}; export the router again")
        docs[name], exemplars[name] = arrays.get(f"catalog__{name}"), arrays.get(f"exemplars__{name}")
        if docs[name] is None or exemplars[name] is None or docs[name].shape[0] != len(catalog):
            raise RouterError(f"{folder / EMBEDDINGS}: no {len(catalog)} catalog embeddings and exemplars of {name}")
        encoders[name] = enc
    return encoders, docs, exemplars
