import pytest

from toolgate.data.korean import attach, final_consonant, particle


@pytest.mark.parametrize("word,form,expected", [
    ("사과", "을", "사과를"), ("책", "를", "책을"),
    ("엄마", "이", "엄마가"), ("동생", "가", "동생이"),
    ("지수", "은", "지수는"), ("민준", "는", "민준은"),
    ("엄마", "과", "엄마와"), ("선생님", "와", "선생님과"),
    ("학교", "으로", "학교로"), ("집", "로", "집으로"), ("서울", "으로", "서울로"),  # ㄹ takes 로
    ("지수", "아", "지수야"), ("민준", "야", "민준아"),
    ("오전 7시", "을", "오전 7시를"), ("7", "을", "7을"), ("2", "을", "2를"), ("10", "이", "10이"),
    ("PDF", "을", "PDF를"), ("HTML", "을", "HTML을"),
    ("1시간", "으로", "1시간으로"), ("3", "으로", "3으로"), ("1", "으로", "1로"),
    ("커피", "이랑", "커피랑"), ("빵", "랑", "빵이랑"), ("회의", "이에요", "회의예요"),
])
def test_particle_agreement(word, form, expected):
    assert attach(word, form) == expected


def test_final_consonant_skips_punctuation():
    assert final_consonant("사과)") == 0
    assert final_consonant("집!") != 0


def test_unknown_particle_and_unreadable_word():
    with pytest.raises(ValueError, match="unknown particle"):
        particle("사과", "의")
    with pytest.raises(ValueError, match="cannot choose"):
        particle("???", "을")
