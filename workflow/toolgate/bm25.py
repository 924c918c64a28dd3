"""Okapi BM25 over character n-grams, numpy/scipy only, built for per-query speed.

The index stores, for every vocabulary n-gram, its weight in every document,
``idf(t) * tf(t,d) * c / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))``,
as a dense (vocabulary x documents) float64 matrix: a catalog is small (tens to
hundreds of documents), so one row gather and one dot product score a query
against the whole catalog. A query term counts as often as it occurs in the
query, as in rank_bm25.

IDF variants (``idf``):

* ``lucene`` (default): ``log(1 + (N - df + 0.5) / (df + 0.5))``, always
  positive, and ``c = 1`` (Lucene drops the constant ``k1 + 1``); identical
  to bm25s' default ``method="lucene"``.
* ``robertson``: ``log((N - df + 0.5) / (df + 0.5))`` with rank_bm25's floor
  (a negative idf is replaced by ``epsilon`` times the mean idf) and
  ``c = k1 + 1``; identical to ``rank_bm25.BM25Okapi``.

The two variants rank alike up to the idf difference; their scales differ.
"""
from __future__ import annotations

import io as _io
from collections import Counter

import numpy as np
import scipy.sparse as sp

from .text import TOKENIZERS, char_ngrams, morphemes

IDF_VARIANTS = ("lucene", "robertson")


class BM25:
    def __init__(self, k1: float = 1.5, b: float = 0.75, idf: str = "lucene", epsilon: float = 0.25,
                 ngram: int = 3, pad: bool = True, tokenizer: str = "char"):
        if idf not in IDF_VARIANTS:
            raise ValueError(f"unknown idf variant '{idf}' (known: {', '.join(IDF_VARIANTS)})")
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer '{tokenizer}' (known: {', '.join(TOKENIZERS)})")
        self.k1, self.b, self.idf_variant, self.epsilon, self.ngram, self.pad = k1, b, idf, epsilon, ngram, pad
        self.tokenizer = tokenizer
        self.vocab: dict[str, int] = {}
        self.weights = np.zeros((0, 0), dtype=np.float32)

    # -- building
    def tokenize(self, text: str) -> list[str]:
        """Character n-grams (the paper's index), or Kiwi morphemes with ``tokenizer="kiwi"``."""
        return morphemes(text) if self.tokenizer == "kiwi" else char_ngrams(text, self.ngram, self.pad)

    def fit(self, docs: list[str]) -> "BM25":
        return self.fit_tokens([self.tokenize(d) for d in docs])

    def fit_tokens(self, docs: list[list[str]]) -> "BM25":
        if not docs:
            raise ValueError("cannot index an empty catalog")
        counts = [Counter(d) for d in docs]
        vocab: dict[str, int] = {}
        for c in counts:
            for t in c:
                vocab.setdefault(t, len(vocab))
        rows, cols, tf = [], [], []
        for j, c in enumerate(counts):
            for t, n in c.items():
                rows.append(vocab[t])
                cols.append(j)
                tf.append(n)
        n_docs = len(docs)
        tfm = sp.csr_matrix((np.array(tf, float), (rows, cols)), shape=(len(vocab), n_docs))
        doc_len = np.array([len(d) for d in docs], float)
        df = np.diff(tfm.indptr).astype(float)
        self.vocab, self.doc_len = vocab, doc_len
        self.idf = self._idf(df, n_docs)
        avgdl = doc_len.mean() if doc_len.mean() > 0 else 1.0
        norm = self.k1 * (1 - self.b + self.b * doc_len / avgdl)
        coo = tfm.tocoo()
        c = 1.0 if self.idf_variant == "lucene" else self.k1 + 1
        w = self.idf[coo.row] * coo.data * c / (coo.data + norm[coo.col])
        self.weights = np.zeros((len(vocab), n_docs), dtype=np.float64)
        self.weights[coo.row, coo.col] = w
        self._tf = tfm
        return self

    def _idf(self, df: np.ndarray, n: int) -> np.ndarray:
        if self.idf_variant == "lucene":
            return np.log(1 + (n - df + 0.5) / (df + 0.5))
        idf = np.log((n - df + 0.5) / (df + 0.5))
        floor = self.epsilon * idf.mean()
        return np.where(idf < 0, floor, idf)

    # -- scoring
    def score(self, text: str) -> np.ndarray:
        """Scores of one query against every document.

        The hot path: a repeated n-gram repeats its row in the gather, which is
        its query term frequency, so no counting is needed.
        """
        vocab = self.vocab
        ids = [vocab[g] for g in self.tokenize(text) if g in vocab]
        if not ids:
            return np.zeros(self.weights.shape[1])
        return self.weights[ids].sum(axis=0)

    def score_many(self, texts: list[str]) -> np.ndarray:
        """(queries x documents) score matrix."""
        return self.score_many_tokens([self.tokenize(t) for t in texts])

    def score_many_tokens(self, queries: list[list[str]]) -> np.ndarray:
        """Score matrix for already tokenised queries."""
        rows, cols, vals = [], [], []
        for i, toks in enumerate(queries):
            for t, n in Counter(toks).items():
                if t in self.vocab:
                    rows.append(i)
                    cols.append(self.vocab[t])
                    vals.append(n)
        q = sp.csr_matrix((np.array(vals, float), (rows, cols)), shape=(len(queries), len(self.vocab)))
        return np.asarray(q @ self.weights)

    # -- serialisation: vocabulary + sparse term counts; weights are rebuilt on load
    def to_bytes(self) -> bytes:
        buf = _io.BytesIO()
        tf = self._tf.tocsc()
        terms = "\n".join(sorted(self.vocab, key=self.vocab.get)).encode("utf-8")
        np.savez_compressed(buf, terms=np.frombuffer(terms, dtype=np.uint8), indptr=tf.indptr.astype(np.int32),
                            indices=tf.indices.astype(np.int32),
                            data=tf.data.astype(np.uint8 if tf.data.max(initial=0) < 256 else np.uint32),
                            params=np.array([self.k1, self.b, self.epsilon, self.ngram, self.pad,
                                             IDF_VARIANTS.index(self.idf_variant),
                                             TOKENIZERS.index(self.tokenizer)], float))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, blob: bytes) -> "BM25":
        z = np.load(_io.BytesIO(blob))
        k1, b, eps, ngram, pad, idf, tok = z["params"]
        self = cls(k1, b, IDF_VARIANTS[int(idf)], eps, int(ngram), bool(pad), TOKENIZERS[int(tok)])
        terms = bytes(z["terms"]).decode("utf-8").split("\n")
        tf = sp.csc_matrix((z["data"].astype(float), z["indices"], z["indptr"]), shape=(len(terms), len(z["indptr"]) - 1))
        docs = []
        for j in range(tf.shape[1]):
            col = tf[:, [j]].tocoo()
            docs.append([terms[i] for i, n in zip(col.row, col.data) for _ in range(int(n))])
        return self.fit_tokens(docs)
