"""One home for what a language is (toolgate.core.lang): no Hangul range or Korean request ending is spelled outside
it, its word lists load as data, and the fold reads what phone keyboards type as the rules know it."""
import re

import pytest

from conftest import ROOT
from toolgate.core import lang

PKG = ROOT / "workflow" / "toolgate"
# a Hangul range written out (\uac00-\ud7a3, 가-힣, 0xAC00), or the request endings as an alternation (줘|주세요)
SPELLED = re.compile(r"\\u(?:ac00|d7a3|1100|3130)|가-힣|0x[Aa][Cc]00|줘\|")


def spelled_outside(files) -> list[str]:
    return [f"{path.name}:{n}" for path in files for n, line in
            enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if SPELLED.search(line)]


def test_hangul_ranges_and_request_endings_are_spelled_in_lang_alone():
    files = [p for p in PKG.rglob("*.py") if "lang" not in p.relative_to(PKG).parts]
    assert spelled_outside(files) == []


def test_the_check_finds_a_planted_range_and_ending(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('A = re.compile("[\\uac00-\\ud7a3]")\nB = "(?:줘|주세요)"\nC = "가"\n', encoding="utf-8")
    assert [x.rsplit(":", 1)[1] for x in spelled_outside([planted])] == ["1", "2"]


def test_word_lists_are_read_per_language_and_joined():
    assert {"please", "좀"} <= lang.listed("filler")
    assert "좀" in lang.listed("filler", ("ko",)) and "please" not in lang.listed("filler", ("ko",))
    assert lang.listed("no_such_list") == frozenset()


def test_request_endings_match_spaced_and_unspaced():
    end = re.compile(lang.KO_REQUEST_END + "$")
    assert all(end.search(t) for t in ("꺼 줘", "켜 주세요", "해 줄 수 있어", "해줄수있어", "하자"))
    assert not end.search("와이파이")


@pytest.mark.parametrize("typed,read", [
    ("Don\u2019t delete report.pdf", "Don't delete report.pdf"),      # a phone's apostrophe
    ("N\u0435ver delete the file", "Never delete the file"),          # Cyrillic е inside a Latin word
    ("\u201cturn off wifi\u201d", '"turn off wifi"'),                  # typographic quotes
    ("ｗｉｆｉ ６시", "wifi 6시"),                                        # full-width forms (NFKC)
    ("del\u200bete all", "delete all"),                               # a zero-width space
    ("\u0441\u043f\u0430\u0441\u0438\u0431\u043e", "\u0441\u043f\u0430\u0441\u0438\u0431\u043e"),  # a Russian word stays
    ("와이파이 꺼 줘", "와이파이 꺼 줘"),
])
def test_fold_reads_what_phones_type(typed, read):
    assert lang.fold(typed) == read
