"""The report's section of the benchmarks `make bench` runs: shown when they ran, one line saying how when not."""
import pandas as pd

from toolgate.report.build import BENCH_OFF, bench_blocks


def fig(stem):
    return [("fig", stem)]


def test_one_line_when_bench_did_not_run():
    stale = {"tokenizer_ablation": pd.DataFrame({"variant": ["char3"]})}  # left by an earlier `make bench`
    on = {"scaling": {"enabled": True}, "tokenizer_ablation": {"enabled": True}}
    assert bench_blocks(stale, {**on, "bench": False}, fig) == [("p", BENCH_OFF)] == bench_blocks({}, on, fig)
    assert "make bench" in BENCH_OFF and BENCH_OFF.count(". ") == 0


def test_nothing_said_where_the_config_switches_both_studies_off():
    assert bench_blocks({}, {"bench": False, "scaling": {"enabled": False}}, fig) == []


def test_nothing_said_of_an_absent_study_when_bench_ran():
    assert bench_blocks({}, {"bench": True}, fig) == [("fig", "fig_tokenizer_ablation")]
