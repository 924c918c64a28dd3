"""Benchmark jobs in fresh interpreters."""
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
