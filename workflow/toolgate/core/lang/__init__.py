"""What a language is, in one place: the scripts' character ranges and the listed words of each language (data files
``<lang>/<name>.txt``, one word a line, ``#`` comments, as bm25s keeps its stopword lists). Every other module
imports these; a test fails where a Hangul range or a Korean request ending is spelled outside this package."""
from __future__ import annotations

import re
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
