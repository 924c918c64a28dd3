"""Text normalisation and character n-grams shared by every lexical component.

NFKC folds full-width forms and composes jamo into syllables (one syllable is one character: the paper's 3-grams
count syllables); casefold also folds sharp s; whitespace runs become one space; ``pad`` adds a space at both ends
so word-edge grams exist and a short query still yields one. Tokenizers (:func:`term_function`) cut Hangul words
into their unit and keep character n-grams elsewhere (docs/metrics.md, 'Korean lexical units')."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from itertools import groupby

import numpy as np

from .errors import require
from .lang import HANGUL, SYLLABLES

_WS = re.compile(r"\s+")
_SYLLABLES = re.compile(f"[{SYLLABLES}]+")
_SPEC = re.compile(r"(char|jamo|kiwi\+char)([1-8]?)|kiwi")


def normalize(text: str, casefold: bool = True) -> str:
    """NFKC, optional case folding, whitespace collapsed to single spaces."""
    text = unicodedata.normalize("NFKC", text)
    if casefold:
        text = text.casefold()
    return _WS.sub(" ", text).strip()


def char_ngrams(text: str, n: int = 3, pad: bool = True, casefold: bool = True) -> list[str]:
    """Character n-grams of the normalised text, in order, repeats kept.

    Repeats matter: BM25 uses them as term frequencies. A text shorter than
    ``n`` after padding yields itself as the single gram; an empty text yields
    no grams.
    """
    return windows(ngram_source(text, pad, casefold), n)


def ngram_source(text: str, pad: bool = True, casefold: bool = True) -> str:
    """The normalised (and padded) string whose ``windows`` are the text's character n-grams.

    It is also the most compact exact record of those n-grams (neighbours share
    ``n - 1`` characters), which is what a serialised BM25 index stores.
    """
    return padded(normalize(text, casefold), pad)


def padded(norm: str, pad: bool) -> str:
    """A normalised text with one space at both ends when ``pad`` (an empty text stays empty)."""
    return f" {norm} " if norm and pad else norm


def windows(source: str, n: int) -> list[str]:
    """Every ``n``-character window of ``source``; a source of at most ``n`` characters is its own gram."""
    if n < 1:
        raise ValueError(f"n-gram size must be >= 1, got {n}")
    if not source:
        return []
    if len(source) <= n:
        return [source]
    return [source[i : i + n] for i in range(len(source) - n + 1)]


def window_counts(sources: list[str], n: int, chunk: int = 4096):
    """What counting every source's :func:`windows` gives, computed on code points with numpy: (vocabulary: each
    window's id, in order of first occurrence, source by source; term ids and counts of each source's distinct
    windows, ids ascending, source after source; windows per source; distinct windows per source).

    A window is one integer, its code points (+1, so a shorter whole-source gram differs from every full
    window) as digits in base max + 2; None when such a number can pass 63 bits (n above 3 on arbitrary text)
    or a source holds a lone surrogate, and the caller counts the windows themselves. Sources are taken
    ``chunk`` at a time, so the temporary arrays stay a few times the chunk's text.
    """
    try:
        texts = ["".join(sources[i:i + chunk]) for i in range(0, len(sources), chunk)]
        codes = [np.frombuffer(t.encode("utf-32-le"), np.uint32).astype(np.int64) + 1 for t in texts]
    except UnicodeEncodeError:
        return None
    base = int(max((c.max() for c in codes if len(c)), default=1)) + 1
    if base ** n >= 1 << 63:
        return None
    lens = np.fromiter(map(len, sources), np.int64, len(sources))
    n_win = np.where(lens > 0, np.maximum(lens - n + 1, 1), 0)
    known, known_id, vocab = np.empty(0, np.int64), np.empty(0, np.int64), {}
    term_ids, counts, distinct = [], [], []
    for k, (text, code) in enumerate(zip(texts, codes)):
        lo, hi = k * chunk, min((k + 1) * chunk, len(sources))
        wins, width = n_win[lo:hi], np.repeat(np.minimum(lens[lo:hi], n), n_win[lo:hi])
        starts = np.cumsum(lens[lo:hi]) - lens[lo:hi]
        pos = np.repeat(starts, wins) + np.arange(wins.sum()) - np.repeat(np.cumsum(wins) - wins, wins)
        code = np.concatenate([code, np.zeros(n, np.int64)])
        keys = np.zeros(len(pos), np.int64)
        for j in range(n):
            keys = keys * base + np.where(j < width, code[pos + j], 0)
        uniq, inverse = np.unique(keys, return_inverse=True)  # an unstable sort, then each window's first place:
        first = np.full(len(uniq), len(keys))  # three times faster than unique's stable sort for return_index
        np.minimum.at(first, inverse, np.arange(len(keys)))
        at = np.searchsorted(known, uniq)
        seen = known[np.minimum(at, len(known) - 1)] == uniq if len(known) else np.zeros(len(uniq), bool)
        ids = np.empty(len(uniq), np.int64)
        ids[seen] = known_id[at[seen]]
        fresh = np.flatnonzero(~seen)  # in key order, as ``known`` keeps them
        new = fresh[np.argsort(first[fresh], kind="stable")]  # in order of first occurrence, as ids are given
        ids[new] = np.arange(len(vocab), len(vocab) + len(new))
        for p, w in zip(pos[first[new]].tolist(), width[first[new]].tolist()):
            vocab[text[p:p + w]] = len(vocab)
        known = np.insert(known, at[fresh], uniq[fresh])
        known_id = np.insert(known_id, at[fresh], ids[fresh])
        pair = np.repeat(np.arange(hi - lo), wins) * len(vocab) + ids[inverse]
        pairs, count = np.unique(pair, return_counts=True)
        term_ids.append(pairs % len(vocab))
        counts.append(count)
        distinct.append(np.bincount(pairs // len(vocab), minlength=hi - lo))
    return vocab, np.concatenate(term_ids), np.concatenate(counts), n_win, np.concatenate(distinct)


def jaccard(a: str, b: str, n: int = 3) -> float:
    """Jaccard similarity of the two texts' character n-gram sets."""
    sa, sb = set(char_ngrams(a, n)), set(char_ngrams(b, n))
    if not sa and not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


@cache
def _kiwi():
    return require("kiwipiepy", "ko").Kiwi()


def morphemes(text: str, casefold: bool = True) -> list[str]:
    """Morpheme forms from the Kiwi Korean analyser (English words pass through as words).

    The alternative to character n-grams for a lexical index: Korean particles
    and endings become tokens of their own instead of fusing with the stem.
    The ``kiwi`` tokenizers apply it to Hangul runs only. Needs the ``ko`` extra.
    """
    norm = normalize(text, casefold)
    return [t.form for t in _kiwi().tokenize(norm)] if norm else []


TOKENIZERS = ("char", "kiwi", "jamo", "kiwi+char")  # the units; a spec may add a Hangul n-gram size


def parse_tokenizer(spec: str) -> tuple[str, int]:
    """(unit, Hangul n-gram size or 0 when the spec gives none) of a tokenizer spec such as ``jamo3``."""
    m = _SPEC.fullmatch(spec)
    if not m:
        raise ValueError(f"unknown tokenizer '{spec}' (known: {', '.join(TOKENIZERS)}; char, jamo and kiwi+char may "
                         "end in a Hangul n-gram size 1-8, e.g. jamo3)")
    return m.group(1) or "kiwi", int(m.group(2) or 0)


def decompose_hangul(text: str) -> str:
    """Hangul syllables as conjoining jamo (NFD: 알 -> ㅇ ㅏ ㄹ); every other character unchanged."""
    return _SYLLABLES.sub(lambda m: unicodedata.normalize("NFD", m.group()), text)


def hangul_runs(norm: str) -> list[tuple[bool, str]]:
    """(contains Hangul, run) for the maximal runs of words of a normalised text that do or do not contain Hangul."""
    return [(h, " ".join(words)) for h, words in groupby(norm.split(), key=lambda w: bool(HANGUL.search(w)))]


@dataclass(frozen=True)
class Terms:
    """How BM25 turns a text into terms: the tokenizer spec (:func:`term_function`), the character n-gram size of
    the non-Hangul runs (and of the Hangul ones unless the spec gives its own) and whether runs are padded."""
    tokenizer: str = "char"
    ngram: int = 3
    pad: bool = True


def term_function(spec: str, n: int = 3, pad: bool = True):
    """The terms of an ``ngram_source`` string under tokenizer ``spec``: a function of that string.

    ``n`` is the character n-gram size of the non-Hangul runs, and of the
    Hangul ones unless the spec gives its own. Runs are padded one by one, so
    the n-grams straddling a Hangul/other word boundary of a mixed text (a few
    in a bilingual catalog text) are the only ones plain ``char`` has and the
    others lack.
    """
    unit, hn = parse_tokenizer(spec)
    hn = hn or n
    if unit == "char" and hn == n:  # the paper's: one string, no runs
        return lambda source: windows(source, n)
    grams = lambda run, size: windows(padded(run, pad), size)  # noqa: E731
    hangul = {"char": lambda run: grams(run, hn), "jamo": lambda run: grams(decompose_hangul(run), hn),
              "kiwi": morphemes, "kiwi+char": lambda run: morphemes(run) + grams(run, hn)}[unit]
    return lambda source: [t for h, run in hangul_runs(source) for t in (hangul(run) if h else grams(run, n))]


def tokenize(text: str, spec: str = "char", n: int = 3, pad: bool = True) -> list[str]:
    """The terms of ``text`` under tokenizer ``spec`` (see :func:`term_function`)."""
    return term_function(spec, n, pad)(ngram_source(text, pad))
