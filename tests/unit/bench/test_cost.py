"""The cost benchmark on a tiny catalog: rows, the ratio column and the serialised index; stopping a job."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import utterance
from toolgate.bench.cost import bench_base, cost_frame
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
    df = cost_frame(small_catalog, rows, {"bm25": spec}, "bm25", run(0, ("ko", "en")),
                    section("cost", {"queries": 5, "warmup": 1}), str(tmp_path / "bm25.npz"))
    assert df["implementation"].tolist() == ["toolgate", "rank_bm25", "bm25s"]
    ours = df.iloc[0]
    assert ours["median_ratio_to_ours"] == 1.0 and ours["size_bytes"] == (tmp_path / "bm25.npz").stat().st_size > 0
    assert (df["queries_timed"] == 5).all() and (df["median_ms"] > 0).all()


def test_cost_frame_times_a_hybrid_as_its_members_fused(tmp_path, small_catalog):
    rows = [utterance(i) for i in range(10)]
    rankers = {"bm25": {"type": "bm25", "variant": "E1"}, "bm25b": {"type": "bm25", "variant": "E0", "k1": 1.2},
               "rrf": {"type": "hybrid", "members": ["bm25", "bm25b"], "method": "rrf"}}
    df = cost_frame(small_catalog, rows, rankers, "bm25", run(0, ("ko", "en")), section("cost", {"queries": 5, "warmup": 1}))
    sizes = df[df["implementation"] == "toolgate"].set_index("ranker")["size_bytes"]
    assert sizes["rrf"] == sizes["bm25"] + sizes["bm25b"] and (df["median_ms"] > 0).all()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_job_stops_its_benchmark_child_and_writes_nothing(tmp_path, stop):
    (tmp_path / "sleeper.py").write_text(  # a benchmark child that reports its pid, then runs long
        "import json, os, pathlib, sys, time\n"
        "pathlib.Path(json.load(sys.stdin)['pidfile']).write_text(str(os.getpid()))\n"
        "time.sleep(60)\n")
    pidfile, out = tmp_path / "child.pid", tmp_path / "out.csv"
    job = (f"from toolgate.bench.timing import run_jobs\n"
           f"run_jobs([{{'name': 'x', 'pidfile': {str(pidfile)!r}}}], module='sleeper')\n"
           f"open({str(out)!r}, 'w').write('written')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "workflow"), str(tmp_path)])}
    parent = subprocess.Popen([sys.executable, "-c", job], env=env, stderr=subprocess.DEVNULL)
    child = None
    try:
        deadline = time.monotonic() + 60  # two interpreter start-ups on a loaded machine
        while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(pidfile.read_text())
        parent.send_signal(stop)
        status = parent.wait(timeout=5)
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the benchmark child outlived its stopped parent"
        assert status == 128 + stop and not out.exists()
    finally:  # a failing run leaves no process behind
        parent.kill()
        if child and _alive(child):
            os.kill(child, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
