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
import math
import zipfile
from pathlib import Path

import numpy as np

from .. import schemas
from ..errors import InputError, MissingExtra
from ..gate.signals import registry
from ..retrieval.bm25 import BM25
from ..retrieval.encoders import ModelUnavailable, make_encoder, offline_problem
from ..retrieval.rankers import BM25Ranker, encoder_kwargs
from .examples import NONE, ExampleModel
from .gates import EMBEDDINGS, texts_sha256

FORMAT = 2
MANIFEST = "router.json"
INDEX = "bm25.index"
FILES = (INDEX, "catalog.jsonl", EMBEDDINGS, MANIFEST)  # the format's fixed file names, the manifest last


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


class _NotFinite(str):
    """A JSON number that is no finite float (NaN, Infinity, 1e999, an integer of 400 digits), kept as its text
    until its field is known."""


def _finite(kind):
    """A ``json.loads`` hook: the number ``kind`` parses, or :class:`_NotFinite` where it is no finite float."""
    def parse(text: str):
        try:
            value = kind(text)
            if math.isfinite(value):  # an int beyond the float range raises OverflowError here
                return value
        except (ValueError, OverflowError):  # ValueError: an integer of more than 4,300 digits
            pass
        return _NotFinite(text)
    return parse


def _not_finite(obj, path: tuple = ()):
    """(dotted field, text) of the first number of ``obj`` that is no finite float; None when there is none."""
    if isinstance(obj, _NotFinite):
        return ".".join(map(str, path)), obj
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    return next((bad for k, v in items if (bad := _not_finite(v, (*path, k)))), None)


def read_manifest(folder: Path) -> dict:
    """The manifest of ``folder``, checked against ``router.schema.yaml`` and the rules the schema cannot say."""
    path = folder / MANIFEST
    if not path.is_file():
        raise RouterError(f"{folder}: no {MANIFEST}; export a router with `toolgate export`")
    try:
        m = json.loads(path.read_text(encoding="utf-8"), parse_float=_finite(float), parse_int=_finite(int),
                       parse_constant=_NotFinite)
        bad = _not_finite(m)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RouterError(f"{path}: not a router manifest ({exc})") from None
    if not isinstance(m, dict):
        raise RouterError(f"{path}: not a router manifest ({json_type(m)}, not an object)")
    if bad:
        field, text = bad
        raise RouterError(f"{path}: field '{field}': {text if len(text) <= 24 else text[:12] + '...'} is not a "
                          "finite number")
    if m.get("format") != FORMAT:
        raise RouterError(f"{path}: router format {m.get('format')!r}, this toolgate reads format {FORMAT}; "
                          "export the router again")
    from .. import __version__  # read when a router loads, not when the runtime is imported

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
    if (p["kind"] == "band") != (gate is not None) or (m["thresholds"]["scale"] == "probability") != (p["kind"] != "ladder"):
        raise RouterError(f"{path}: field 'gate': a band has a gate and probability thresholds, an examples model "
                          "probability thresholds alone, the ladder neither")
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


def checked_index(folder: Path, m: dict, catalog: list[dict]) -> BM25Ranker:
    """The artifact's lexical ranker: its BM25 index, refused unless fitted on this catalog's index texts in this
    order (the digest the index carries, :func:`toolgate.retrieval.bm25.docs_sha256`)."""
    path, blob = folder / INDEX, checked_file(folder, INDEX, m["files"][INDEX])
    try:
        index = BM25.from_bytes(blob)
    except ValueError as exc:
        raise RouterError(f"{path}: unreadable ({exc})") from None
    if index.digest is None:
        raise RouterError(f"{path}: carries no digest of the catalog it was fitted on (an older toolgate's); "
                          "export the router again")
    if index.digest != texts_sha256(catalog, m["lexical"]["spec"]["variant"], tuple(m["langs"])):
        raise RouterError(f"{path}: fitted on other texts than {folder / 'catalog.jsonl'}'s (another catalog or "
                          "another order); export the router again")
    ranker = BM25Ranker.__new__(BM25Ranker)
    ranker.index = index
    return ranker


def _checked_arrays(path: Path, arrays: dict, name: str, rows: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The catalog and exemplar embeddings of encoder ``name``: float32 as exported, ``rows`` rows each, as many
    columns in both, finite; RouterError naming the array otherwise."""
    out = []
    for kind, n in zip(("catalog", "exemplars"), rows):
        key = f"{kind}__{name}"
        a = arrays.get(key)
        if a is None:
            raise RouterError(f"{path}: no array {key}")
        if a.dtype != np.float32 or a.ndim != 2 or a.shape[0] != n or not a.shape[1]:
            raise RouterError(f"{path}: array {key} is {a.dtype} of shape {a.shape}; the router reads float32 "
                              f"with {n} rows and at least one column")
        if not np.isfinite(a).all():
            raise RouterError(f"{path}: array {key} holds a value that is not a finite number")
        out.append(a)
    if out[0].shape[1] != out[1].shape[1]:
        raise RouterError(f"{path}: arrays catalog__{name} and exemplars__{name} differ in columns "
                          f"({out[0].shape[1]} and {out[1].shape[1]})")
    return tuple(out)


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
        docs[name], exemplars[name] = _checked_arrays(folder / EMBEDDINGS, arrays, name, (len(catalog), entry["exemplars"]))
        kwargs = encoder_kwargs({**spec["encoder"], **({"threads": threads} if threads else {})})
        try:
            enc = make_encoder(kwargs)
        except (ModelUnavailable, MissingExtra) as exc:
            raise RouterError(f"{folder}: the router's encoder does not load: {exc}") from None
        if enc.key != entry["key"]:
            raise RouterError(f"{where}: the catalog embeddings were made by {entry['key']}, this encoder is "
                              f"{enc.key}; export the router again")
        encoders[name] = enc
    return encoders, docs, exemplars


def load_examples(folder: Path, m: dict, catalog: list[dict]):
    """The examples model of a pipeline of kind examples (:class:`toolgate.router.examples.ExampleModel`): its classes
    must be actions of the catalog (and none), its arrays of their shapes and finite."""
    where = f"{folder / MANIFEST}: field 'examples'"
    entry = m.get("examples")
    if not isinstance(entry, dict) or entry.get("encoder") not in m["encoders"]:
        raise RouterError(f"{where}: a pipeline of kind examples names the encoder of its model under 'examples'")
    fb = m.get("fallback")
    if not isinstance(fb, dict) or fb["thresholds"]["execute"] < fb["thresholds"]["confirm"]:
        raise RouterError(f"{folder / MANIFEST}: field 'fallback': a pipeline of kind examples carries the ladder it "
                          "runs on a catalog without examples, execute >= confirm")
    ids = {t["id"] for t in catalog if t["kind"] == "action"} | {NONE}
    classes = entry.get("classes")
    if not isinstance(classes, list) or len(set(map(str, classes))) != len(classes) or not set(classes) <= ids:
        raise RouterError(f"{where}.classes: not distinct action ids of the catalog (and '' for none)")
    data = checked_file(folder, EMBEDDINGS, m["files"][EMBEDDINGS])
    try:
        arrays = dict(np.load(_io.BytesIO(data), allow_pickle=False))
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise RouterError(f"{folder / EMBEDDINGS}: unreadable ({exc})") from None
    coef, intercept = arrays.get("examples__coef"), arrays.get("examples__intercept")
    dim = arrays[f"catalog__{entry['encoder']}"].shape[1]
    if coef is None or intercept is None or coef.shape != (len(classes), dim) or intercept.shape != (len(classes),) \
            or not (np.isfinite(coef).all() and np.isfinite(intercept).all()):
        raise RouterError(f"{folder / EMBEDDINGS}: the examples model's arrays are missing or not of "
                          f"{len(classes)} classes x {dim} finite numbers; export the router again")
    return ExampleModel.of(entry, arrays)
