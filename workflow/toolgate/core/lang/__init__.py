"""What a language is, in one place: the scripts' character ranges, the listed words of each language (data files
``<lang>/<name>.txt``, one word a line, ``#`` comments, as bm25s keeps its stopword lists) and the characters a
request is folded from before anything reads it (:func:`fold`). Every other module imports these; a test fails
where a Hangul range or a Korean request ending is spelled outside this package."""
from __future__ import annotations

import re
import unicodedata
from functools import cache
from importlib import resources

LANGS = ("ko", "en")
# Hangul: syllables, conjoining jamo (and their extended blocks) and compatibility jamo
SYLLABLES = "\uac00-\ud7a3"
JAMO = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\ud7b0-\ud7ff"
SYLLABLE = re.compile(f"[{SYLLABLES}]")  # a Hangul syllable: what a Korean word is written in
HANGUL = re.compile(f"[{JAMO}{SYLLABLES}]")
FIRST_SYLLABLE, LAST_SYLLABLE = 0xAC00, 0xD7A3


def _lines(*path: str) -> list[str]:
    text = resources.files(__package__).joinpath(*path).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@cache
def listed(name: str, langs: tuple[str, ...] = LANGS) -> frozenset[str]:
    """The words of list ``name`` over ``langs`` (a language without that list adds none)."""
    out = set()
    for lang in langs:
        if resources.files(__package__).joinpath(lang, f"{name}.txt").is_file():
            out.update(_lines(lang, f"{name}.txt"))
    return frozenset(out)


def alternation(words) -> str:
    """A regex group matching any of ``words`` (a space in one: an optional space), longest first."""
    return "(?:%s)" % "|".join(re.escape(w).replace(r"\ ", r"\s?") for w in sorted(words, key=lambda w: (-len(w), w)))


# Korean request endings (줘, 주세요, 해라, 켜 ...): a clause ending on one asks
KO_REQUEST_END = alternation(listed("request_endings", ("ko",)))
# the last syllable of a Korean verb or request (틀어줘, 켜요, 할까): a request ending on one reads as Korean
KO_VERB_FINAL = re.compile("[%s]$" % "".join(sorted(listed("verb_final_syllables", ("ko",)))))
# a syllable of a past-tense stem (했, 껐, 봤)
KO_PAST = "".join(sorted(listed("past_syllables", ("ko",))))

# Typographic quotes and apostrophes as phone keyboards type them, read as the ASCII ones the rules know
_QUOTES = str.maketrans({c: "'" for c in "\u2018\u2019\u201a\u201b\u2032\u02bc\uff07"}
                        | {c: '"' for c in "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb\uff02"})


@cache
def _confusables() -> dict[str, str]:
    return {chr(int(cp, 16)): latin for cp, latin, _ in (line.split("\t") for line in _lines("confusables.tsv"))}


_LATIN_WORD = re.compile(r"\w*[A-Za-z]\w*")


def fold(text: str) -> str:
    """``text`` as the router reads it: NFKC (full-width forms, compatibility jamo composed), format characters
    (zero-width space and joiners, BOM, soft hyphen, direction marks) removed, typographic quotes and apostrophes as
    ASCII ones, and inside a word holding a Latin letter, a letter of another script that imitates a Latin one as
    that letter (Unicode TR39 confusables: Nеver with a Cyrillic е). Case and spacing are kept."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf").translate(_QUOTES)
    table = _confusables()
    if not any(c in table for c in text):
        return text
    return _LATIN_WORD.sub(lambda m: "".join(table.get(c, c) for c in m.group()), text)
