"""Benchmark jobs, each in its own process forked by a job server."""
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
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
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
