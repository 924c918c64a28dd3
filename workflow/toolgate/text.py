"""Text normalisation and character n-grams shared by every lexical component.

Choices, each deliberate:

* Unicode NFKC: folds full-width Latin and digits to ASCII and composes
  conjoining Hangul jamo into precomposed syllables, so the same request typed
  on different keyboards gives the same n-grams. Hangul is handled as
  syllables: one syllable block is one character, never decomposed into jamo,
  because a 3-gram of syllables is the unit the paper's index counts.
* Case folding (``str.casefold``) rather than ``lower``: it also folds German
  sharp s and similar, and leaves Hangul unchanged.
* Whitespace collapsing: any run of Unicode whitespace becomes one space and the
  ends are stripped, so padding and n-gram boundaries do not depend on typing.
* Padding: with ``pad=True`` one space is added at both ends of the normalised
  text, so word-initial and word-final grams (" se", "rm ") exist and a query
  shorter than ``n`` still yields at least one gram.
"""
from __future__ import annotations

import re
import unicodedata
from functools import cache

from .errors import require

_WS = re.compile(r"\s+")


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
    norm = normalize(text, casefold)
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
    Needs the ``ko`` extra.
    """
    norm = normalize(text, casefold)
    return [t.form for t in _kiwi().tokenize(norm)] if norm else []


TOKENIZERS = ("char", "kiwi")
