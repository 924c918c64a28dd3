from hypothesis import given, strategies as st

from toolgate.text import char_ngrams, jaccard, normalize


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
