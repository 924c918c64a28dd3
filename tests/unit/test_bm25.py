"""Our BM25 against hand-computed values and the reference libraries."""
import math
from pathlib import Path

import bm25s
import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from toolgate import io
from toolgate.bm25 import BM25
from toolgate.scores import top_order
from toolgate.catalog import index_text

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("ko", "en")


@pytest.fixture(scope="module")
def device70():
    catalog = io.load_catalog(ROOT / "data/catalogs/device70/catalog.jsonl")
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
    m = BM25(tokenizer="kiwi").fit(docs)
    assert "알람" in m.tokenize("알람을 맞춰 줘") and "을" in m.tokenize("알람을 맞춰 줘")
    assert m.tokenize("Set an ALARM") == ["set", "an", "alarm"]
    np.testing.assert_allclose(BM25.from_bytes(m.to_bytes()).score_many(queries), m.score_many(queries), atol=1e-12)
    with pytest.raises(ValueError, match="unknown tokenizer"):
        BM25(tokenizer="spaces")
