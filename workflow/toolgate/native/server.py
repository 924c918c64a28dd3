"""The server's life: pre-flight, launch, readiness, and a stop that frees the GPU.

Every way of not coming up raises :class:`~.protocol.DeploymentError` with the
stage and the captured text, so the caller can record it as a deployment outcome.
Which server is launched, and how, is :mod:`.backends`' business.
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..core import io
from .backends import preflight, server_command, server_label
from .client import http_get
from .protocol import DeploymentError, classify_failure

log = logging.getLogger(__name__)

LOG_TAIL_CHARS = 4000  # how much of a server log the deployment JSON keeps
STOP_GRACE_S = 30.0  # vLLM shuts its engine down on SIGTERM; give it this long before SIGKILL


# ---------------------------------------------------------------- server lifecycle


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path, n: int = LOG_TAIL_CHARS) -> str:
    """The end of a server log; "" when there is none."""
    if path is None:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")[-n:]
    except OSError:
        return ""


def is_ready(base_url: str) -> str:
    """The path that answers 200: GET /health (vLLM, llama.cpp's llama-server) or, failing that, /v1/models
    (llama-cpp-python has no /health); "" when neither does."""
    return next((p for p in ("/health", "/v1/models") if http_get(f"{base_url}{p}")[0] == 200), "")


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
    launched: str = ""  # what was launched (backends.server_label); "" in endpoint mode

    def alive(self) -> bool:
        return self.proc is None or self.proc.poll() is None


@contextlib.contextmanager
def serving(entry: dict, log_path, readiness_timeout_s: float, endpoint: str, poll_s: float = 1.0,
            server: str = "vllm"):
    """A ready :class:`Server` for ``entry`` on ``server`` (``native.server``); the server is always stopped on exit.

    With ``endpoint`` nothing is started: the block gets that base URL once it
    answers (one that never answers is a readiness timeout). Otherwise the
    pre-flight runs (unless the entry brings its own ``command``), the server
    starts with its output in ``log_path``, and every way of not becoming ready
    raises :class:`DeploymentError`.
    """
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if endpoint:
        base = endpoint.rstrip("/").removesuffix("/v1")
        io.write_atomic(log_path, f"endpoint mode: no server started; using {base}\n")
        ready = wait_ready(base, readiness_timeout_s, log_path=log_path, poll_s=poll_s)
        yield Server(base, [], ready)
        return
    if not entry.get("command"):
        try:
            preflight(server, entry)
        except DeploymentError as exc:  # the server log says why no server ran
            io.write_atomic(log_path, f"pre-flight: {exc.stage}; no server started\n{exc.text}\n")
            raise
    port = free_port()
    cmd = server_command(entry, port, server)
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
            yield Server(base, cmd, ready, proc, server_label(server, entry))
        finally:
            stop_process(proc)
            log.info("server stopped (exit code %s)", proc.returncode)
