import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgate.core.text import (
    char_ngrams,
    decompose_hangul,
    hangul_runs,
    jaccard,
    morphemes,
    normalize,
    parse_tokenizer,
    tokenize,
)


def test_normalize_nfkc_casefold_whitespace():
    assert normalize("  Ｓｅｔ\tALARM \n now ") == "set alarm now"
    # conjoining jamo compose to the syllable block
    assert normalize("\u1100\u1161") == "가"


def test_char_ngrams_padded_and_counted():
    assert char_ngrams("Ab c", 3) == [" ab", "ab ", "b c", " c "]
    assert char_ngrams("ab c", 3, pad=False) == ["ab ", "b c"]
    assert char_ngrams("알람 설정", 3) == [" 알람", "알람 ", "람 설", " 설정", "설정 "]
    assert char_ngrams("a", 3) == [" a "]
    assert char_ngrams("   ", 3) == []


def test_jaccard_hand_computed():
    # {" ab","ab "} vs {" ab","abc","bc "}: 1 shared of 4
    assert jaccard("ab", "abc") == 0.25
    assert jaccard("same", "SAME") == 1.0
    assert jaccard("", "") == 0.0


@given(st.text())
def test_ngram_count_matches_length(s):
    grams = char_ngrams(s, 3)
    norm = normalize(s)
    if norm:
        assert len(grams) == max(1, len(norm) + 2 - 2)
        assert all(len(g) == 3 for g in grams)
    else:
        assert grams == []


# ----------------------------------------------------------------------------- tokenizers
def test_jamo_units_share_a_stem_across_particles():
    with_particle, bare = set(tokenize("알람을", "jamo3")), set(tokenize("알람", "jamo3"))
    assert set(char_ngrams("알람을")) & set(char_ngrams("알람")) == {" 알람"}  # syllable 3-grams: one shared
    # ㅇㅏㄹㄹㅏㅁ: " ㅇㅏ", "ㅇㅏㄹ", "ㅏㄹㄹ", "ㄹㄹㅏ", "ㄹㅏㅁ" in both
    assert len(with_particle & bare) == 5 and len(bare) == 6
    assert decompose_hangul("알 café 7") == "\u110b\u1161\u11af café 7"  # only syllables decompose


@pytest.mark.parametrize("spec", ["char2", "char4", "jamo", "jamo3", "kiwi", "kiwi+char", "kiwi+char3"])
def test_english_text_keeps_its_character_ngrams(spec):
    assert tokenize("Set an ALARM for 7", spec) == char_ngrams("Set an ALARM for 7")


def test_units_apply_to_hangul_runs_only():
    assert hangul_runs("wi-fi 켜 줘 now") == [(False, "wi-fi"), (True, "켜 줘"), (False, "now")]
    assert tokenize("Wi-Fi 켜 줘", "char2") == char_ngrams("Wi-Fi", 3) + char_ngrams("켜 줘", 2)
    assert tokenize("와이파이 켜 줘", "char3") == char_ngrams("와이파이 켜 줘")  # char at n: the paper's, one string
    assert tokenize("알람 set", "char3", n=2) == char_ngrams("알람", 3) + char_ngrams("set", 2)


def test_kiwi_plus_char_is_morphemes_and_character_3grams():
    pytest.importorskip("kiwipiepy")
    text = "내일 아침 알람을 맞춰 줘"
    assert tokenize(text, "kiwi+char3") == morphemes(text) + char_ngrams(text, 3)
    assert tokenize(text, "kiwi") == morphemes(text) and "을" in morphemes(text)


def test_unknown_tokenizer_spec():
    assert parse_tokenizer("kiwi") == ("kiwi", 0) and parse_tokenizer("kiwi+char3") == ("kiwi+char", 3)
    for bad in ("kiwi3", "spaces", "char9", "jamo33"):
        with pytest.raises(ValueError, match="unknown tokenizer"):
            parse_tokenizer(bad)
