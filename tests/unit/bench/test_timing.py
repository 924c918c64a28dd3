"""Benchmark jobs, each in its own process forked by a job server."""
import contextlib
import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.slow  # starts one interpreter per benchmark job


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_job_stops_its_benchmark_child_and_writes_nothing(tmp_path, stop):
    (tmp_path / "sleeper.py").write_text(  # a benchmark job that reports its pid, then runs long
        "import os, pathlib, time\n"
        "def _bench(job):\n"
        "    pathlib.Path(job['pidfile']).write_text(str(os.getpid()))\n"
        "    time.sleep(60)\n")
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
    """Running: a zombie (killed, not yet reaped by whichever process adopted it, which some inits do every 2 s or
    so) runs nothing."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):  # no /proc: a zombie counts as alive, and the wait is longer
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


def test_each_job_runs_in_its_own_process_and_a_failing_one_names_its_error(tmp_path, monkeypatch):
    (tmp_path / "doubler.py").write_text(
        "import os\n"
        "def _bench(job):\n"
        "    print('a job printing to stdout')\n"  # never taken for a result
        "    if job['x'] < 0:\n"
        "        raise ValueError('negative input')\n"
        "    return {'pid': os.getpid(), 'y': 2 * job['x']}\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    from toolgate.bench.timing import run_jobs

    recs = run_jobs([{"name": "a", "x": 1}, {"name": "b", "x": 2}], module="doubler")
    assert [r["y"] for r in recs] == [2, 4] and len({r["pid"] for r in recs} | {os.getpid()}) == 3
    with pytest.raises(RuntimeError, match="(?s)benchmark of c .*ValueError: negative input"):
        run_jobs([{"name": "c", "x": -1}], module="doubler")


def test_jobs_that_take_turns_run_side_by_side_on_one_core_ten_queries_at_a_time(tmp_path, monkeypatch):
    (tmp_path / "stamper.py").write_text(  # each query stamps the clock; the other jobs must be waiting
        "import os, time\n"
        "from toolgate.bench.timing import measure\n"
        "def _bench(job, turn=None):\n"
        "    stamps = []\n"
        "    def score(q):\n"
        "        stamps.append(time.monotonic_ns())\n"
        "        time.sleep(0.002)\n"
        "        if q == job.get('fail'):\n"
        "            raise ValueError('failed on ' + q)\n"
        "        return [0.0]\n"
        "    stats, _ = measure(score, lambda qs: None, job['queries'], [], 1, turn)\n"
        "    return {'pid': os.getpid(), 'stamps': stamps, 'timed': stats['queries_timed'],\n"
        "            'cpus': sorted(os.sched_getaffinity(0))}\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    from toolgate.bench.timing import TURN_QUERIES, run_jobs

    qs = [f"q{i}" for i in range(2 * TURN_QUERIES + 5)]
    jobs = [{"name": n, "queries": qs, "turns": "t"} for n in ("x", "y", "z")] + [{"name": "w", "queries": qs}]
    recs = run_jobs(jobs, module="stamper")
    assert len({r["pid"] for r in recs}) == 4 and all(r["timed"] == len(qs) for r in recs)
    assert [r["cpus"] for r in recs[:3]] == [[min(os.sched_getaffinity(0))]] * 3  # one core for the three
    assert recs[3]["cpus"] == sorted(os.sched_getaffinity(0))  # a job alone keeps every core
    # x: warm-up + 10 queries, then y, then z; x: the query before + the next 10, ...; then x, y, z the last 5
    order = [pid for _, pid in sorted((t, r["pid"]) for r in recs[:3] for t in r["stamps"])]
    runs = [(pid, len(list(g))) for pid, g in itertools.groupby(order)]
    pids = [r["pid"] for r in recs[:3]]
    assert runs == [(p, 1 + TURN_QUERIES) for p in pids] * 2 + [(p, 1 + 5) for p in pids]
    assert min(recs[3]["stamps"]) > max(t for r in recs[:3] for t in r["stamps"])  # w alone, after
    for bad in ("y", "z"):  # a failing job ends the others' turns too: an error naming a job, no hang
        with pytest.raises(RuntimeError, match="(?s)benchmark of x .*ValueError: failed on q12"):
            run_jobs([{**j, "fail": "q12" if j["name"] == bad else None} for j in jobs[:3]], module="stamper")


def test_the_batch_throughput_is_the_fastest_of_its_runs_within_a_second():
    from toolgate.bench.timing import measure

    def runs(seconds):
        calls, left = [], list(seconds)
        return calls, lambda qs: (calls.append(1), time.sleep(left.pop(0)))

    calls, batch = runs([0.2, 0.05, 0.1])
    stats, _ = measure(lambda q: [0.0], batch, ["a"], ["a"] * 10, 0)
    assert len(calls) == 3 and 10 / 0.1 < stats["batch_qps"] <= 10 / 0.05
    calls, batch = runs([0.6, 0.5, 0.01])  # a second is spent after two runs
    stats, _ = measure(lambda q: [0.0], batch, ["a"], ["a"] * 10, 0)
    assert len(calls) == 2 and 10 / 0.6 < stats["batch_qps"] <= 10 / 0.5
