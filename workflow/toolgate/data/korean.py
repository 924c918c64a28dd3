"""Korean particle agreement: pick the particle form that fits the preceding word.

Korean particles alternate on whether the preceding syllable ends in a final
consonant (batchim): 을/를, 이/가, 은/는, 과/와, 아/야, 이랑/랑, 이나/나,
이라고/라고, 이에요/예요. 으로/로 is the exception: a final ㄹ takes 로.
Words ending in a digit or a Latin letter are judged by how the character is
read aloud in Korean (7 -> 칠, final ㄹ; "PDF" -> 에프, no final).
"""
from __future__ import annotations

from ..core.lang import FIRST_SYLLABLE, LAST_SYLLABLE

# (form after a final consonant, form after a vowel)
PAIRS = [("이라고", "라고"), ("이에요", "예요"), ("이랑", "랑"), ("이나", "나"), ("으로", "로"),
         ("을", "를"), ("이", "가"), ("은", "는"), ("과", "와"), ("아", "야")]
_FORMS = {form: pair for pair in PAIRS for form in pair}

_RIEUL = 8  # index of ㄹ among the 28 final-consonant slots
# Final consonant of each digit's Korean reading: 영 일 이 삼 사 오 육 칠 팔 구.
_DIGIT_FINAL = {"0": 21, "1": _RIEUL, "2": 0, "3": 16, "4": 0, "5": 0, "6": 1, "7": _RIEUL, "8": _RIEUL, "9": 0}
# Latin letters whose Korean names end in a consonant: 엘 엠 엔 알 (l m n r).
_LATIN_FINAL = {"l": _RIEUL, "m": 16, "n": 4, "r": _RIEUL}


def final_consonant(word: str) -> int | None:
    """Index (0 = none, 8 = ㄹ) of the final consonant of the last readable character."""
    for ch in reversed(word):
        if FIRST_SYLLABLE <= ord(ch) <= LAST_SYLLABLE:
            return (ord(ch) - FIRST_SYLLABLE) % 28
        if ch in _DIGIT_FINAL:
            return _DIGIT_FINAL[ch]
        if ch.isascii() and ch.isalpha():
            return _LATIN_FINAL.get(ch.lower(), 0)
    return None


def particle(word: str, form: str) -> str:
    """The form of ``form``'s particle that agrees with ``word``."""
    if form not in _FORMS:
        raise ValueError(f"unknown particle '{form}' (known: {', '.join(f for p in PAIRS for f in p)})")
    after_consonant, after_vowel = _FORMS[form]
    final = final_consonant(word)
    if final is None:
        raise ValueError(f"cannot choose a particle after '{word}': no Hangul, digit or Latin letter")
    if after_consonant == "으로" and final == _RIEUL:
        return after_vowel
    return after_consonant if final else after_vowel


def attach(word: str, form: str) -> str:
    """``word`` followed by the agreeing particle, e.g. attach('사과', '을') == '사과를'."""
    return word + particle(word, form)
