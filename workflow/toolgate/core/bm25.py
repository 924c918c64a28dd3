"""Okapi BM25 over character n-grams, numpy only for a single query, built for per-query speed.

Dense or sparse weights by catalog size, the Lucene or rank_bm25 idf, and a compact checksummed serialised form;
docs/router.md, 'The BM25 index', says how and why.
"""
from __future__ import annotations

import hashlib
import lzma
import math
import struct
import zlib
from array import array
from collections import Counter

import numpy as np

from .text import TOKENIZERS, Terms, ngram_source, parse_tokenizer, term_function, window_counts

IDF_VARIANTS = ("lucene", "robertson")
LAYOUTS = ("auto", "dense", "sparse")
DENSE_MAX_BYTES = 16 << 20
HOT_SHARE = 4

_TAG = b"TGBM25\x03"  # format name and version
_READS = (1, 2, 3)  # versions from_bytes reads; the tokenizer byte packs more since 2, the digest follows since 3
_HEAD = struct.Struct("<IdddBBBBB")  # crc32, k1, b, epsilon, ngram, pad, idf, tokenizer (unit + 16 * Hangul n), form
_DIGEST = 32  # bytes of the sha256 after the header (format 3); all zero: fitted on token lists, no texts
_FORMS = ("sources", "tokens")  # what the payload holds per document
_DOC, _TOKEN = "\x1e", "\x1f"  # separators; whitespace to text.normalize, so never inside a source
_LZMA = [{"id": lzma.FILTER_LZMA2, "preset": 6}]  # 8 MiB dictionary: small memory at any catalog size


class _Postings:
    """The sparse layout: every term's postings (documents ascending, weights), and a dense row for each term
    found in at least 1/``HOT_SHARE`` of the documents: one vector add, and memory still linear in the postings
    (8N bytes where its postings take 16N/``HOT_SHARE``). Postings are views, so a query term costs one ``np.add.at``.
    """

    def __init__(self, rows: np.ndarray, cols: np.ndarray, w: np.ndarray, n_terms: int, n_docs: int):
        """From the (term, document, weight) triples of distinct pairs: term-major, each term's documents ascending
        (scipy's CSR of them, built in numpy: a router loads a large catalog without scipy)."""
        order = np.lexsort((cols, rows))
        df = np.bincount(rows, minlength=n_terms)
        self.indptr = np.concatenate([[0], np.cumsum(df)])
        self.w, self.cols = w[order], cols[order].astype(np.intp)  # np.add.at casts any other index type, every call
        bounds = self.indptr.tolist()
        self.cols_of = [self.cols[lo:hi] for lo, hi in zip(bounds, bounds[1:])]
        self.w_of = [self.w[lo:hi] for lo, hi in zip(bounds, bounds[1:])]
        hot = np.flatnonzero(df * HOT_SHARE >= n_docs)
        self.hot = np.zeros((len(hot), n_docs))
        for row, t in zip(self.hot, hot):
            row[self.cols_of[t]] = self.w_of[t]
        hot_of = np.full(len(df), -1)
        hot_of[hot] = np.arange(len(hot))
        self.hot_of = hot_of.tolist()  # a list: the fastest scalar lookups

    def add(self, out: np.ndarray, ids: list[int], times: list[float]) -> np.ndarray:
        """``out`` (every document's score) plus the weights of terms ``ids``, each ``times`` its count, one term at
        a time in the order of ``ids``: each document gets the same additions in the same order whichever way a
        term is stored, so the same bits. A count of 1 multiplies nothing (``w * 1.0 == w``)."""
        for n, t in zip(times, ids):
            row = self.hot_of[t]
            if row >= 0:
                out += self.hot[row] if n == 1 else n * self.hot[row]
            else:
                np.add.at(out, self.cols_of[t], self.w_of[t] if n == 1 else n * self.w_of[t])
        return out


def _count(docs) -> tuple:
    """Vocabulary (ids in order of first occurrence: deterministic whatever the hash seed), each document's distinct
    terms' ids and counts (document after document), terms per document, distinct terms per document."""
    vocab: dict[str, int] = {}
    rows, tf, doc_len, distinct = array("q"), array("q"), array("q"), array("q")
    for toks in docs:  # no token list outlives its document
        counts = Counter(toks)
        for t in counts:
            if t not in vocab:
                vocab[t] = len(vocab)
        rows.extend(map(vocab.__getitem__, counts))
        tf.extend(counts.values())
        doc_len.append(len(toks))
        distinct.append(len(counts))
    return vocab, *(np.frombuffer(a, np.int64) for a in (rows, tf, doc_len, distinct))


def docs_sha256(docs) -> str:
    """The digest of a list of texts in order (what a fitted index or a catalog's embeddings are of)."""
    return hashlib.sha256("\x1f".join(docs).encode()).hexdigest()


class BM25:
    def __init__(self, k1: float = 1.5, b: float = 0.75, idf: str = "lucene", epsilon: float = 0.25,
                 terms: Terms = Terms()):
        tokenizer, ngram, pad = terms.tokenizer, terms.ngram, terms.pad
        if idf not in IDF_VARIANTS:
            raise ValueError(f"unknown idf variant '{idf}' (known: {', '.join(IDF_VARIANTS)})")
        if not (0 <= k1 < math.inf and 0 <= b <= 1 and 0 <= epsilon < math.inf and ngram >= 1):  # NaN fails too
            raise ValueError(f"BM25 parameters out of range: k1 {k1}, b {b}, epsilon {epsilon}, ngram {ngram} "
                             "(k1 and epsilon finite and at least 0, b from 0 to 1, ngram at least 1)")
        self.k1, self.b, self.idf_variant, self.epsilon, self.ngram, self.pad = k1, b, idf, epsilon, ngram, pad
        self.tokenizer = tokenizer
        self._terms = term_function(tokenizer, ngram, pad)  # ValueError for an unknown tokenizer
        unit, hangul_n = parse_tokenizer(tokenizer)
        self._kiwi, self._windows = unit.startswith("kiwi"), unit == "char" and hangul_n in (0, ngram)
        self.vocab: dict[str, int] = {}
        self.layout = ""
        self._dense: np.ndarray | None = None
        self._sparse: _Postings | None = None
        self._stored: tuple[str, list[str]] = ("tokens", [])
        self.digest: str | None = None  # docs_sha256 of the texts fitted on (None: fitted on token lists)

    # -- building
    def tokenize(self, text: str) -> list[str]:
        """Character n-grams (the paper's index), or the terms of another tokenizer (``text.term_function``)."""
        return self._terms(ngram_source(text, self.pad))

    def fit(self, docs: list[str], layout: str = "auto") -> "BM25":
        if self._kiwi:
            self.fit_tokens([self.tokenize(d) for d in docs], layout)
        else:
            self._fit_sources([ngram_source(d, self.pad) for d in docs], layout)
        self.digest = docs_sha256(docs)
        return self

    def fit_tokens(self, docs: list[list[str]], layout: str = "auto") -> "BM25":
        self._fit(lambda: _count(docs), len(docs), layout)
        self._stored = ("tokens", ["".join(t + _TOKEN for t in d) for d in docs])  # each term ends in _TOKEN
        return self

    def _fit_sources(self, sources: list[str], layout: str) -> "BM25":
        self._fit(lambda: (self._windows and window_counts(sources, self.ngram)) or _count(map(self._terms, sources)),
                  len(sources), layout)
        self._stored = ("sources", sources)
        return self

    def _fit(self, count, n_docs: int, layout: str) -> None:
        """``count()``: the documents' term counts (:func:`_count`), then the weights."""
        if not n_docs:
            raise ValueError("cannot index an empty catalog")
        if layout not in LAYOUTS:
            raise ValueError(f"unknown layout '{layout}' (known: {', '.join(LAYOUTS)})")
        vocab, rows, tf, doc_len, distinct = count()
        self.digest = None  # fit() sets it again after fitting on texts
        tfs, doc_len = tf.astype(float), doc_len.astype(float)
        cols = np.repeat(np.arange(n_docs, dtype=np.int32), distinct)
        df = np.bincount(rows, minlength=len(vocab))
        self.vocab, self.doc_len = vocab, doc_len
        self.idf = self._idf(df.astype(float), n_docs)
        avgdl = doc_len.mean() if doc_len.mean() > 0 else 1.0
        norm = self.k1 * (1 - self.b + self.b * doc_len / avgdl)
        c = 1.0 if self.idf_variant == "lucene" else self.k1 + 1
        w = self.idf[rows] * tfs * c / (tfs + norm[cols])
        if layout == "auto":
            layout = "dense" if len(vocab) * n_docs * 8 <= DENSE_MAX_BYTES else "sparse"
        self.layout, self._dense, self._sparse = layout, None, None
        if layout == "dense":
            self._dense = np.zeros((len(vocab), n_docs))
            self._dense[rows, cols] = w
        else:  # term-major, each term's documents ascending
            self._sparse = _Postings(rows, cols, w, len(vocab), n_docs)

    def _idf(self, df: np.ndarray, n: int) -> np.ndarray:
        if self.idf_variant == "lucene":
            return np.log(1 + (n - df + 0.5) / (df + 0.5))
        idf = np.log((n - df + 0.5) / (df + 0.5))
        floor = self.epsilon * idf.mean()
        return np.where(idf < 0, floor, idf)

    @property
    def n_docs(self) -> int:
        return len(self.doc_len)

    @property
    def weights(self):
        """The (vocabulary x documents) weights: a dense array or a scipy CSR matrix, by layout."""
        if self._dense is not None:
            return self._dense
        import scipy.sparse as sp

        p = self._sparse
        return sp.csr_matrix((p.w, p.cols, p.indptr), shape=(len(self.vocab), self.n_docs))

    # -- scoring
    def score(self, text: str) -> np.ndarray:
        """Scores of one query against every document: the batch's own sum (:meth:`score_many_tokens`), term by term
        in vocabulary order, so a request decided alone gets the bits it gets in a batch (numpy's pairwise sum of
        the rows in the query's order differed in the last bit for most requests)."""
        return self.score_many_tokens([self.tokenize(text)])[0]

    def score_many(self, texts: list[str]) -> np.ndarray:
        """(queries x documents) score matrix."""
        return self.score_many_tokens([self.tokenize(t) for t in texts])

    def score_many_tokens(self, queries: list[list[str]]) -> np.ndarray:
        """Score matrix for already tokenised queries: the product of their term counts (distinct terms in
        vocabulary order) with the weights, added term by term as scipy's sparse product adds it up (the same bits),
        in numpy alone: a router scores a batch without scipy."""
        counted = [Counter(self.vocab[t] for t in toks if t in self.vocab) for toks in queries]
        out = np.zeros((len(queries), self.n_docs))
        for row, c in zip(out, counted):
            ids = sorted(c)
            if self._sparse is not None:
                self._sparse.add(row, ids, [float(c[t]) for t in ids])
            else:
                for t in ids:
                    row += float(c[t]) * self._dense[t]
        return out

    # -- serialisation
    def to_bytes(self) -> bytes:
        form, docs = self._stored
        if form == "tokens" and (any(_DOC in d for d in docs)
                                 or sum(d.count(_TOKEN) for d in docs) != self.doc_len.sum()):
            raise ValueError("cannot serialise an index whose terms contain \\x1e or \\x1f")
        payload = lzma.compress(_DOC.join(docs).encode("utf-8"), format=lzma.FORMAT_RAW, filters=_LZMA)
        unit, hangul_n = parse_tokenizer(self.tokenizer)
        fields = (self.k1, self.b, self.epsilon, self.ngram, self.pad, IDF_VARIANTS.index(self.idf_variant),
                  TOKENIZERS.index(unit) + 16 * hangul_n, _FORMS.index(form))
        body = _HEAD.pack(0, *fields)[4:] + bytes.fromhex(self.digest or "00" * _DIGEST) + payload
        return _TAG + struct.pack("<I", zlib.crc32(body)) + body

    def document_terms(self, i: int) -> list[str]:
        """The terms of document ``i`` as the index stores them (its vocabulary and weights are made of these)."""
        form, docs = self._stored
        return self._terms(docs[i]) if form == "sources" else docs[i].split(_TOKEN)[:-1]

    @classmethod
    def from_bytes(cls, blob: bytes, bound: tuple[int, int] | None = None) -> "BM25":
        """The index ``to_bytes`` wrote; ValueError for anything else (truncated, corrupted, another format).
        ``bound``: (the most bytes its payload may unpack to, the documents it must hold), both checked before the
        payload is unpacked past that size or any document is counted."""
        blob = bytes(blob)
        version = blob[len(_TAG) - 1] if len(blob) >= len(_TAG) else 0
        start = len(_TAG) + _HEAD.size + (_DIGEST if version >= 3 else 0)  # the payload's
        if len(blob) < start or not blob.startswith(_TAG[:-1]):
            raise ValueError(f"not a toolgate BM25 index ({len(blob)} bytes without its header)")
        if version not in _READS:
            raise ValueError(f"unsupported BM25 index format version {version} (this reads {', '.join(map(str, _READS))})")
        crc, k1, b, eps, ngram, pad, idf, tok, form = _HEAD.unpack_from(blob, len(_TAG))
        if zlib.crc32(blob[len(_TAG) + 4:]) != crc:
            raise ValueError("corrupted or truncated BM25 index (checksum mismatch)")
        if version == 1 and tok == TOKENIZERS.index("kiwi"):
            raise ValueError("a format 1 kiwi index sent English words through Kiwi, which kiwi no longer does: refit it")
        try:
            text = _unpacked(blob[start:], bound and bound[0]).decode("utf-8")
            self = cls(k1, b, IDF_VARIANTS[idf], eps, Terms(TOKENIZERS[tok % 16] + str(tok // 16 or ""), ngram, bool(pad)))
            docs = text.split(_DOC)
            if bound and len(docs) != bound[1]:
                raise ValueError(f"it holds {len(docs)} documents where {bound[1]} are expected")
            if _FORMS[form] == "sources":
                self._fit_sources(docs, "auto")
            else:
                self.fit_tokens([d.split(_TOKEN)[:-1] for d in docs])
        except (lzma.LZMAError, UnicodeDecodeError, IndexError, ValueError) as exc:
            raise ValueError(f"corrupted BM25 index ({type(exc).__name__}: {exc})") from None
        digest = blob[start - _DIGEST:start] if version >= 3 else bytes(_DIGEST)
        self.digest = digest.hex() if any(digest) else None
        return self


def _unpacked(payload: bytes, limit: int | None) -> bytes:
    """An index's LZMA payload unpacked; ValueError when it would unpack to more than ``limit`` bytes (None: any),
    found before more than that is held, or ends early."""
    if limit is None:
        return lzma.decompress(payload, format=lzma.FORMAT_RAW, filters=_LZMA)
    unpack = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=_LZMA)
    out = unpack.decompress(payload, max_length=limit + 1)
    if len(out) > limit:
        raise ValueError(f"its payload unpacks to more than {limit} bytes, the most this catalog's texts take")
    if not unpack.eof:
        raise lzma.LZMAError("Compressed data ended before the end-of-stream marker was reached")
    return out
