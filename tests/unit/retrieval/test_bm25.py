"""Our BM25 against hand-computed values and the reference libraries."""
import math
import struct
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from toolgate.config import Text
from toolgate.config import load as load_config
from toolgate.core.bm25 import BM25, DENSE_MAX_BYTES, IDF_VARIANTS, docs_sha256
from toolgate.core.catalog import load_catalog
from toolgate.core.rankers import fit_ranker
from toolgate.core.text import Terms

bm25s = pytest.importorskip("bm25s", reason="the bench extra (reference BM25s)")
BM25Okapi = pytest.importorskip("rank_bm25", reason="the bench extra (reference BM25s)").BM25Okapi
from toolgate.core.catalog import index_text
from toolgate.core.scores import top_order

ROOT = Path(__file__).resolve().parents[3]
LANGS = ("ko", "en")


@pytest.fixture(scope="module")
def device70():
    catalog = load_catalog(ROOT / "data/catalogs/device70/catalog.jsonl")
    docs = [index_text(t, "E1", LANGS) for t in catalog]
    queries = ["내일 아침 7시에 알람 맞춰 줘", "Turn on Wi-Fi", "엄마한테 전화해", "what's the weather tomorrow?",
               "알람 알람 알람", "zzzz", "사진 찍어서 지수한테 보내 줘", "Set the volume to 50 percent"]
    return docs, queries


def test_hand_computed_single_term():
    # two docs, tokens as-is: N=2, df(a)=1 -> lucene idf = log(1 + 1.5/1.5) = log 2
    m = BM25(k1=1.2, b=0.0).fit_tokens([["a", "b"], ["b"]])
    tf, k1 = 1, 1.2
    assert m.score_many_tokens([["a"]])[0] == pytest.approx([math.log(2) * tf / (tf + k1), 0.0])


@pytest.mark.parametrize("k1,b,eps", [(1.5, 0.75, 0.25), (1.2, 0.5, 0.1), (2.0, 1.0, 0.25)])
def test_equivalent_to_rank_bm25(device70, k1, b, eps):
    docs, queries = device70
    ours = BM25(k1=k1, b=b, idf="robertson", epsilon=eps).fit(docs)
    ref = BM25Okapi([ours.tokenize(d) for d in docs], k1=k1, b=b, epsilon=eps)
    for q in queries:
        np.testing.assert_allclose(ours.score(q), ref.get_scores(ours.tokenize(q)), atol=1e-6)


@pytest.mark.parametrize("k1,b", [(1.5, 0.75), (0.9, 0.4)])
def test_equivalent_to_bm25s_lucene(device70, k1, b):
    docs, queries = device70
    ours = BM25(k1=k1, b=b, idf="lucene").fit(docs)
    ref = bm25s.BM25(k1=k1, b=b, method="lucene", dtype="float64")
    ref.index([ours.tokenize(d) for d in docs], show_progress=False)
    for q in queries:
        toks = [t for t in ours.tokenize(q) if t in ours.vocab]
        expected = ref.get_scores(toks) if toks else np.zeros(len(docs))
        np.testing.assert_allclose(ours.score(q), expected, atol=1e-6)


def test_batch_equals_single_and_roundtrip(device70):
    docs, queries = device70
    m = BM25().fit(docs)
    batch = m.score_many(queries)
    np.testing.assert_allclose(batch, np.array([m.score(q) for q in queries]), atol=1e-12)
    blob = m.to_bytes()
    assert len(blob) < 64_000
    np.testing.assert_allclose(BM25.from_bytes(blob).score_many(queries), batch, atol=1e-12)


def test_ties_keep_catalog_order():
    assert top_order(np.array([1.0, 3.0, 3.0, 0.0, 3.0])).tolist() == [1, 2, 4, 0, 3]


def test_unknown_query_scores_zero_and_bad_params():
    m = BM25().fit(["alarm", "wifi"])
    assert m.score("ㅋㅋㅋㅋ").tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="unknown idf"):
        BM25(idf="okapi")
    with pytest.raises(ValueError, match="empty catalog"):
        BM25().fit([])


def test_index_text_variants():
    t = {"names": {"ko": "알람", "en": "Alarm"}, "descriptions": {"ko": "알람 설정", "en": "Set an alarm."},
         "parameters": {"properties": {"alarm_time": {"type": "string", "description": {"ko": "시각", "en": "time"},
                                                      "enum": ["am", "pm"]}}}, "keywords": {"ko": ["기상"], "en": ["wake"]}}
    assert index_text(t, "E0") == "알람 Alarm 알람 설정 Set an alarm."
    assert index_text(t, "E1") == "알람 Alarm 알람 설정 Set an alarm. alarm time 시각 time am pm 기상 wake"
    assert index_text(t, "E0", ("en",)) == "Alarm Set an alarm."


def test_kiwi_morpheme_tokenizer_and_roundtrip(device70):
    pytest.importorskip("kiwipiepy")
    docs, queries = device70
    m = BM25(terms=Terms("kiwi")).fit(docs)
    assert "알람" in m.tokenize("알람을 맞춰 줘") and "을" in m.tokenize("알람을 맞춰 줘")
    assert m.tokenize("Set an ALARM") == BM25().tokenize("Set an ALARM")  # English keeps its character n-grams
    np.testing.assert_allclose(BM25.from_bytes(m.to_bytes()).score_many(queries), m.score_many(queries), atol=1e-12)
    with pytest.raises(ValueError, match="unknown tokenizer"):
        BM25(terms=Terms("spaces"))


# ----------------------------------------------------------------------------- layouts and the serialised index
def recombined_docs(device70_docs, n, seed=0):
    """``n`` documents, each the first, middle and last third of three device70 texts: a catalog too big for dense."""
    rng = np.random.default_rng(seed)
    thirds = lambda d, k: d[k * len(d) // 3: (k + 1) * len(d) // 3]  # noqa: E731
    return [" ".join(thirds(device70_docs[i], k) for k, i in enumerate(rng.integers(len(device70_docs), size=3)))
            for _ in range(n)]


@pytest.mark.parametrize("idf", IDF_VARIANTS)
def test_dense_and_sparse_layouts_give_identical_scores(device70, idf):
    docs, queries = device70
    big = recombined_docs(docs, 800)
    auto = BM25(idf=idf).fit(big)
    assert auto.layout == "sparse" and len(auto.vocab) * len(big) * 8 > DENSE_MAX_BYTES
    assert 0 < len(auto._sparse.hot) < len(auto.vocab)  # both kinds of term: dense rows and scattered postings
    dense = BM25(idf=idf).fit(big, layout="dense")
    queries = queries + big[:5]
    for q in queries:
        assert np.array_equal(auto.score(q), dense.score(q)), q
    assert np.array_equal(auto.score_many(queries), dense.score_many(queries))
    assert BM25().fit(docs).layout == "dense"  # device70 keeps the fastest layout


def term_by_term(m: BM25, queries: list[str]) -> np.ndarray:
    """The scores as our BM25 has always added them up, from its weights alone: scipy's product of the (queries x
    vocabulary) term-count matrix with the weights (``score`` of one query gives its row of it, bit for bit)."""
    w = sp.csr_matrix(m.weights)
    rows, cols, counts = [], [], []
    for i, q in enumerate(queries):
        ids = [m.vocab[g] for g in m.tokenize(q) if g in m.vocab]
        for t, n in Counter(ids).items():
            rows.append(i), cols.append(t), counts.append(float(n))
    q = sp.csr_matrix((counts, (rows, cols)), shape=(len(queries), len(m.vocab)))
    return (q @ w).toarray()


@pytest.mark.parametrize("idf", IDF_VARIANTS)
def test_scores_bit_identical_to_term_by_term_reference(device70, idf):
    """Scores are pinned to the bit, whatever the layout and however the scoring is organised: the default
    catalog (dense layout) and a recombined 2000-tool one (sparse, hot rows and postings), on queries that touch
    a few documents, queries that touch nearly all (whole documents, one repeated three times) and none; one
    query alone gets its row of the batch (a request decided alone is decided as in a batch)."""
    docs, queries = device70
    big = recombined_docs(docs, 2000)
    queries = queries + big[:6] + [" ".join([big[0]] * 3), "", "zzzz"]
    for m in (BM25(idf=idf).fit(docs), BM25(idf=idf).fit(big)):
        batch = term_by_term(m, queries)
        assert m.score_many(queries).tobytes() == batch.tobytes()
        assert np.array([m.score(q) for q in queries]).tobytes() == batch.tobytes()
    hot = [m._sparse.hot_of[m.vocab[g]] >= 0 for g in m.tokenize(big[0])]
    assert m.layout == "sparse" and 0 < sum(hot) < len(hot)  # a whole document: hot rows and postings, interleaved
    assert (m.score(big[0]) > 0).mean() > 0.99 and (m.score(queries[0]) > 0).mean() < 0.5


@pytest.mark.parametrize("idf", IDF_VARIANTS)
def test_roundtrip_scores_identical(device70, idf):
    docs, queries = device70
    for fitted in (BM25(idf=idf).fit(docs), BM25(idf=idf, k1=1.2, b=0.5, terms=Terms(ngram=2, pad=False)).fit(docs),
                   BM25(idf=idf).fit_tokens([d.split() for d in docs])):
        loaded = BM25.from_bytes(fitted.to_bytes())
        assert loaded.layout == fitted.layout and list(loaded.vocab) == list(fitted.vocab)
        assert np.array_equal(loaded.score_many(queries), fitted.score_many(queries))
        for q in queries:
            assert np.array_equal(loaded.score(q), fitted.score(q))


@pytest.mark.parametrize("tokenizer", ["kiwi", "kiwi+char3", "jamo", "jamo3", "char2", "char4"])
def test_roundtrip_korean_tokenizers_identical(device70, tokenizer):
    if tokenizer.startswith("kiwi"):
        pytest.importorskip("kiwipiepy")
    docs, queries = device70
    fitted = BM25(terms=Terms(tokenizer)).fit(docs)
    loaded = BM25.from_bytes(fitted.to_bytes())
    assert loaded.tokenizer == tokenizer and list(loaded.vocab) == list(fitted.vocab)
    assert np.array_equal(loaded.score_many(queries), fitted.score_many(queries))
    # an analyser-free tokenizer stores the texts (terms cut again on load), a Kiwi one its token lists
    assert fitted._stored[0] == ("tokens" if tokenizer.startswith("kiwi") else "sources")


def older(blob: bytes, version: int) -> bytes:
    """A format 3 index as format ``version`` wrote it: the same header without the digest (char was tokenizer byte
    0 in formats 1 and 2 both), its CRC-32 computed again."""
    body = blob[11:40] + blob[72:]  # the header's fields after the CRC, then the payload
    return blob[:6] + bytes([version]) + struct.pack("<I", zlib.crc32(body)) + body


@pytest.mark.parametrize("version", [1, 2])
def test_formats_1_and_2_read_without_digest_except_kiwi_1(device70, version):
    blob = BM25().fit(device70[0]).to_bytes()
    old = BM25.from_bytes(older(blob, version))
    assert np.array_equal(old.score_many(device70[1]), BM25.from_bytes(blob).score_many(device70[1]))
    assert old.digest is None
    kiwi = older(BM25(terms=Terms("kiwi")).fit_tokens([["알람"], ["set"]]).to_bytes(), version)  # Kiwi never runs
    if version == 1:
        with pytest.raises(ValueError, match="format 1 kiwi index"):
            BM25.from_bytes(kiwi)
    else:
        assert BM25.from_bytes(kiwi).tokenizer == "kiwi"


def test_index_carries_the_digest_of_its_texts_in_order(device70):
    """Format 3: the sha256 of the texts fitted on, in order, read back as written; token lists carry none."""
    docs = device70[0]
    fitted = BM25().fit(docs)
    assert fitted.digest == docs_sha256(docs) != docs_sha256(docs[::-1])
    assert BM25.from_bytes(fitted.to_bytes()).digest == fitted.digest
    assert BM25.from_bytes(BM25().fit(docs[::-1]).to_bytes()).digest == docs_sha256(docs[::-1])
    assert BM25.from_bytes(BM25(terms=Terms("jamo3")).fit(docs).to_bytes()).digest == fitted.digest
    tokens = BM25().fit(docs).fit_tokens([["a"], ["b"]])  # a refit on token lists drops the texts' digest
    assert tokens.digest is None and BM25.from_bytes(tokens.to_bytes()).digest is None


@pytest.mark.parametrize("k1,b,eps", [(math.nan, 0.75, 0.25), (math.inf, 0.75, 0.25), (1.5, math.nan, 0.25),
                                      (1.5, 2.0, 0.25), (-1.0, 0.75, 0.25), (1.5, 0.75, math.nan)])
def test_parameters_out_of_range_are_refused_fitted_or_read(device70, k1, b, eps):
    """A NaN or infinite parameter would make every score NaN at decide time: refused when made and when read."""
    with pytest.raises(ValueError, match="BM25 parameters out of range"):
        BM25(k1=k1, b=b, epsilon=eps)
    blob = bytearray(BM25().fit(device70[0][:5]).to_bytes())
    blob[11:35] = struct.pack("<ddd", k1, b, eps)
    blob[7:11] = struct.pack("<I", zlib.crc32(bytes(blob[11:])))  # a consistent checksum: only the values are wrong
    with pytest.raises(ValueError, match="corrupted BM25 index .*parameters out of range"):
        BM25.from_bytes(bytes(blob))


def test_device70_index_at_most_12_kb():
    """The index the cost rule writes: the default config's lexical ranker on device70 (E1 texts)."""
    cfg = load_config(ROOT / "config.yaml")
    spec = cfg["rankers"][cfg["roles"]["lexical"]]
    catalog = load_catalog(ROOT / cfg["catalog"])
    ranker = fit_ranker(spec, catalog, cfg["langs"], Text(cfg["text"]["ngram"], cfg["text"]["pad"]))
    blob = ranker.index.to_bytes()
    assert len(blob) <= 12_000
    queries = ["내일 아침 7시에 알람 맞춰 줘", "Turn on Wi-Fi"]
    assert np.array_equal(BM25.from_bytes(blob).score_many(queries), ranker.score_many(queries))


def test_term_frequencies_above_255_roundtrip():
    for m in (BM25().fit(["a" * 600, "ab " * 300, "b"]), BM25().fit_tokens([["x"] * 1000 + ["y"], ["y"]])):
        loaded = BM25.from_bytes(m.to_bytes())
        assert np.array_equal(loaded.score_many(["aaaa", "ab", "x y"]), m.score_many(["aaaa", "ab", "x y"]))


def test_corrupted_or_truncated_index_raises_value_error(device70):
    blob = BM25().fit(device70[0]).to_bytes()
    bad = [b"", b"garbage", blob[:10], blob[:40], blob[: len(blob) // 2], blob[:-1], blob + b"\0",
           blob[:7] + b"\0" + blob[8:]]
    for i in (0, 6, 8, 12, 20, 40, 60, len(blob) // 2, len(blob) - 1):
        flipped = bytearray(blob)
        flipped[i] ^= 0x10
        bad.append(bytes(flipped))
    for b in bad:
        with pytest.raises(ValueError, match="BM25 index"):
            BM25.from_bytes(b)
    with pytest.raises(ValueError, match="version 4"):
        BM25.from_bytes(blob[:6] + b"\x04" + blob[7:])


def test_terms_holding_separators_are_refused():
    with pytest.raises(ValueError, match="cannot serialise"):
        BM25().fit_tokens([["a\x1fb"], ["c"]]).to_bytes()


@pytest.mark.parametrize("n", [1, 2, 3])
def test_numpy_window_counts_equal_the_counted_windows(device70, n):
    """The char index counts its n-grams with numpy (text.window_counts); the vocabulary with its ids, every
    document's counts and so every weight are exactly those of counting each document's windows, over several
    chunks (a chunk of 7), empty and shorter-than-n texts, repeats and mixed scripts; beyond 63 bits it declines."""
    from toolgate.core.bm25 import _count
    from toolgate.core.text import ngram_source, window_counts, windows

    docs, _ = device70
    sources = [ngram_source(d) for d in docs + ["", "a", "ab", "알람 알람 알람", "Wi-Fi 켜 줘", "ㅋㅋ", " "] + docs[:5]]
    fast, slow = window_counts(sources, n, chunk=7), _count(windows(s, n) for s in sources)
    assert fast[0] == slow[0] and list(fast[0].values()) == list(range(len(slow[0])))
    ours = [sorted(zip(t.tolist(), c.tolist())) for t, c in zip(*(np.split(a, np.cumsum(fast[4])[:-1]) for a in fast[1:3]))]
    ref = [sorted(zip(t.tolist(), c.tolist())) for t, c in zip(*(np.split(a, np.cumsum(slow[4])[:-1]) for a in slow[1:3]))]
    assert ours == ref and fast[3].tolist() == slow[3].tolist() and fast[4].tolist() == slow[4].tolist()
    for catalog in (docs, recombined_docs(docs, 2000)):  # the dense layout and the sparse one
        m, reference = BM25(terms=Terms(ngram=n)).fit(catalog), BM25(terms=Terms(ngram=n))
        reference._windows = False  # counted window by window
        reference.fit(catalog)
        w, v = sp.csr_matrix(m.weights), sp.csr_matrix(reference.weights)
        assert m.vocab == reference.vocab and m.doc_len.tobytes() == reference.doc_len.tobytes()
        assert all(getattr(w, a).tobytes() == getattr(v, a).tobytes() for a in ("indptr", "indices", "data"))
    assert window_counts(["\U0010ffff" * 5], 4) is None and window_counts(["\ud800"], 3) is None
