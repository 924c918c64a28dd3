"""Native tool calling, the server's life: launch command, environment, readiness, failure stages, stopping."""
import importlib.util
import os
import sys
import time

import pytest

from native_fixtures import standin_script
from toolgate.native import server
from toolgate.native.protocol import DeploymentError


def test_server_command_for_vllm():
    entry = {"model": "org/m", "revision": "abc", "parser": "hermes", "dtype": "bfloat16", "max_model_len": 4096,
             "chat_template_kwargs": {"enable_thinking": False}, "extra_args": ["--gpu-memory-utilization", "0.8"]}
    cmd = server.server_command(entry, 8123)
    assert cmd[:3] == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    s = " ".join(cmd)
    for part in ("--model org/m", "--host 127.0.0.1", "--port 8123", "--enable-auto-tool-choice",
                 "--tool-call-parser hermes", "--dtype bfloat16", "--max-model-len 4096", "--revision abc",
                 '--default-chat-template-kwargs {"enable_thinking": false}', "--gpu-memory-utilization 0.8"):
        assert part in s
    assert server.server_command({"command": ["srv", "--port", "{port}"]}, 9) == ["srv", "--port", "9"]


def test_environment_reports_vllm_and_gpu():
    env = server.environment()
    assert {"vllm", "gpu", "gpu_memory", "driver"} <= set(env)
    if importlib.util.find_spec("vllm") is None:
        assert env["vllm"] == "not installed"


def test_server_exit_is_classified_from_its_log(tmp_path):
    code = "import sys; print(\"KeyError: 'invalid tool call parser: granite_pythonic (chose from { hermes })'\"); sys.exit(1)"
    entry = {"model": "m", "command": [sys.executable, "-c", code]}
    with pytest.raises(DeploymentError) as exc:
        with server.serving(entry, tmp_path / "s.log", readiness_timeout_s=20, endpoint="", poll_s=0.1):
            pass
    assert exc.value.stage == "parser_unavailable"
    assert "exited with code 1" in exc.value.text and "granite_pythonic" in exc.value.text


def test_readiness_timeout_stops_the_server(tmp_path):
    pidfile = tmp_path / "pid"
    code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    entry = {"model": "m", "command": [sys.executable, "-c", code]}
    t0 = time.monotonic()
    with pytest.raises(DeploymentError) as exc:
        with server.serving(entry, tmp_path / "s.log", readiness_timeout_s=2, endpoint="", poll_s=0.1):
            pass
    assert exc.value.stage == "readiness_timeout"
    assert time.monotonic() - t0 < 20
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_body_failure_still_stops_the_server(tmp_path):
    entry = {"model": "m", "command": [sys.executable, str(standin_script(tmp_path)), "{port}"]}
    with pytest.raises(KeyError):
        with server.serving(entry, tmp_path / "s.log", readiness_timeout_s=20, endpoint="", poll_s=0.1) as srv:
            proc = srv.proc
            raise KeyError("client bug")
    assert proc.poll() is not None
