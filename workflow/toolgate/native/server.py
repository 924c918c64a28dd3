"""The server's life: pre-flight, launch, readiness, and a stop that frees the GPU.

Every way of not coming up raises :class:`~.protocol.DeploymentError` with the
stage and the captured text, so the caller can record it as a deployment outcome.
"""
from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .. import io
from .client import http_get
from .protocol import DeploymentError, classify_failure

log = logging.getLogger(__name__)

LOG_TAIL_CHARS = 4000  # how much of a server log the deployment JSON keeps
STOP_GRACE_S = 30.0  # vLLM shuts its engine down on SIGTERM; give it this long before SIGKILL


# ---------------------------------------------------------------- environment and pre-flight


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _nvidia_smi(*args: str, timeout: float = 30) -> subprocess.CompletedProcess | None:
    """Run nvidia-smi; None when it is not on PATH."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        return subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess([exe, *args], 1, "", f"nvidia-smi failed: {exc}")


def environment() -> dict:
    """vLLM version and the GPUs nvidia-smi reports (name, memory, driver), for the deployment table."""
    env = {"vllm": _version("vllm"), "torch": _version("torch"), "python": platform.python_version(),
           "gpu": "no GPU", "gpu_memory": "", "driver": ""}
    proc = _nvidia_smi("--query-gpu=name,memory.total,driver_version", "--format=csv,noheader")
    if proc is not None and proc.returncode == 0 and proc.stdout.strip():
        gpus = [[c.strip() for c in line.split(",")] for line in proc.stdout.strip().splitlines()]
        gpus = [g for g in gpus if len(g) == 3]
        if gpus:
            env["gpu"] = "; ".join(g[0] for g in gpus)
            env["gpu_memory"] = "; ".join(g[1] for g in gpus)
            env["driver"] = "; ".join(dict.fromkeys(g[2] for g in gpus))
    return env


def preflight() -> None:
    """Fail fast, with the right stage, when vLLM cannot start here at all.

    Cheaper and clearer than launching a server that dies in its first second:
    vLLM must be importable by this interpreter (the one that will run the
    server) and a CUDA device must be visible.
    """
    if importlib.util.find_spec("vllm") is None:
        raise DeploymentError("vllm_not_importable",
                              f"ModuleNotFoundError: No module named 'vllm' (interpreter: {sys.executable})")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        raise DeploymentError("no_cuda_device", f"no CUDA device: CUDA_VISIBLE_DEVICES='{visible}' hides every GPU")
    proc = _nvidia_smi("-L")
    if proc is not None:
        if proc.returncode != 0 or "GPU" not in proc.stdout:
            raise DeploymentError("no_cuda_device", f"no CUDA device: nvidia-smi -L said:\n{proc.stdout}{proc.stderr}")
        return
    if importlib.util.find_spec("torch") is None:
        raise DeploymentError("no_cuda_device", "no CUDA device: nvidia-smi is not on PATH and torch is not installed")
    probe = "import sys, torch; n = torch.cuda.device_count(); print(n); sys.exit(0 if n else 3)"
    try:
        res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise DeploymentError("no_cuda_device", "no CUDA device: torch.cuda.device_count() did not return") from None
    if res.returncode != 0:
        raise DeploymentError("no_cuda_device",
                              f"no CUDA device: torch.cuda.device_count() is 0 (nvidia-smi not on PATH)\n{res.stderr[-2000:]}")


# ---------------------------------------------------------------- server lifecycle


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command(entry: dict, port: int) -> list[str]:
    """The launch command for a roster entry.

    ``entry["command"]`` (a list; ``{port}`` is filled in) replaces vLLM with any
    OpenAI-compatible server. Otherwise vLLM's API server, bound to 127.0.0.1.
    """
    if entry.get("command"):
        return [str(a).replace("{port}", str(port)) for a in entry["command"]]
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", entry["model"],
           "--host", "127.0.0.1", "--port", str(port), "--enable-auto-tool-choice",
           "--tool-call-parser", entry["parser"], "--dtype", str(entry.get("dtype") or "auto")]
    if entry.get("max_model_len"):
        cmd += ["--max-model-len", str(entry["max_model_len"])]
    if entry.get("revision"):
        cmd += ["--revision", str(entry["revision"])]
    if entry.get("chat_template_kwargs"):
        cmd += ["--default-chat-template-kwargs", json.dumps(entry["chat_template_kwargs"], sort_keys=True)]
    return cmd + [str(a) for a in entry.get("extra_args") or []]


def _tail(path, n: int = LOG_TAIL_CHARS) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")[-n:]
    except OSError:
        return ""


def is_ready(base_url: str) -> bool:
    """GET /health (vLLM, llama.cpp) or, failing that, /v1/models answers 200."""
    return http_get(f"{base_url}/health")[0] == 200 or http_get(f"{base_url}/v1/models")[0] == 200


def wait_ready(base_url: str, timeout_s: float, proc: subprocess.Popen | None = None, log_path=None,
               poll_s: float = 1.0) -> float:
    """Seconds until ``base_url`` is ready; DeploymentError when ``proc`` exits first or time runs out."""
    t0 = time.monotonic()
    while True:
        if proc is not None and proc.poll() is not None:
            text = f"server exited with code {proc.returncode} before it was ready\n{_tail(log_path)}"
            raise DeploymentError(_stage(text, "server_exited"), text)
        if is_ready(base_url):
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout_s:
            text = f"server at {base_url} not ready after {timeout_s:g} s (readiness timeout)\n{_tail(log_path)}"
            raise DeploymentError(_stage(text, "readiness_timeout"), text)
        time.sleep(poll_s)


def _stage(text: str, default: str) -> str:
    """A specific stage found in the log, else ``default``."""
    stage = classify_failure(text)
    return default if stage in ("unknown", "readiness_timeout", "server_exited") else stage


def stop_process(proc: subprocess.Popen, grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM the server's process group, SIGKILL it after ``grace_s``.

    The group matters: vLLM runs its engine in child processes that would
    otherwise outlive the API server and keep the GPU memory (also after the
    API server itself has died).
    """
    group = hasattr(os, "killpg")

    def send(sig):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if group:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)

    if proc.poll() is None:
        send(signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            send(signal.SIGKILL)
            proc.wait(timeout=grace_s)
    if group:  # children that outlived the leader
        send(signal.SIGKILL)


@dataclass
class Server:
    base_url: str
    command: list[str]
    ready_s: float
    proc: subprocess.Popen | None = None

    def alive(self) -> bool:
        return self.proc is None or self.proc.poll() is None


@contextlib.contextmanager
def serving(entry: dict, log_path, readiness_timeout_s: float, endpoint: str, poll_s: float = 1.0):
    """A ready :class:`Server` for ``entry``; the server is always stopped on exit.

    With ``endpoint`` nothing is started: the block gets that base URL once it
    answers. Otherwise the pre-flight runs (unless the entry brings its own
    ``command``), the server starts with its output in ``log_path``, and every
    way of not becoming ready raises :class:`DeploymentError`.
    """
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if endpoint:
        base = endpoint.rstrip("/").removesuffix("/v1")
        io.write_atomic(log_path, f"endpoint mode: no server started; using {base}\n")
        ready = wait_ready(base, readiness_timeout_s, poll_s=poll_s)
        yield Server(base, [], ready)
        return
    if not entry.get("command"):
        try:
            preflight()
        except DeploymentError as exc:  # the server log says why no server ran
            io.write_atomic(log_path, f"pre-flight: {exc.stage}; no server started\n{exc.text}\n")
            raise
    port = free_port()
    cmd = server_command(entry, port)
    base = f"http://127.0.0.1:{port}"
    log.info("starting: %s", " ".join(cmd))
    with open(log_path, "w", encoding="utf-8") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        try:
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        except OSError as exc:
            text = f"server could not be started: {exc}"
            raise DeploymentError(_stage(text, "server_exited"), text) from None
        try:
            ready = wait_ready(base, readiness_timeout_s, proc, log_path, poll_s)
            log.info("server ready after %.1f s at %s", ready, base)
            yield Server(base, cmd, ready, proc)
        finally:
            stop_process(proc)
            log.info("server stopped (exit code %s)", proc.returncode)
