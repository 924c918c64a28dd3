"""Native tool calling through an OpenAI-compatible server (paper Section 7, Table 7).

A roster of tool-calling checkpoints is served by vLLM (``--enable-auto-tool-choice
--tool-call-parser <parser>``) and asked to route every utterance with
``tool_choice="required"``, once with the whole catalog of actions as ``tools``
(condition ``full``) and once with the BM25 top-5 shortlist (``top5``).

A checkpoint that does not come up is a *deployment outcome*, not an accuracy
result: the failure stage and the captured error text are written to the
deployment JSON and the workflow goes on. On a machine without vLLM or without a
GPU every checkpoint is recorded that way, so the pipeline still completes.

``endpoint`` mode skips the server lifecycle and talks to a server the user
already runs (vLLM, llama.cpp server, ...). The client uses only the standard
library (``urllib``), so nothing beyond vLLM itself is needed to serve.

Measures (``native_calls`` table), per checkpoint and condition:

* accuracy: the *first* called tool equals the gold tool, over in-catalog
  utterances (gold ``action`` or ``ask``); a request that failed counts as wrong;
* no_tool_call_rate / malformed_rate: over the responses received (every
  utterance, in-catalog or not);
* recovered_share (``top5`` only): (accuracy - bm25_top1) / (bm25_top5 - bm25_top1),
  the part of the lexical top-1/top-5 gap the native caller closes (as in
  :mod:`toolgate.rerank`); the paper reports 86.3%.
"""
from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import ipaddress
import json
import logging
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import io
from .catalog import actions as catalog_actions
from .errors import InputError
from .selection import Scores, load_scores
from .tables import write_table

log = logging.getLogger(__name__)

CONDITIONS = ("full", "top5")
SHORTLIST_K = 5  # the shortlist size of condition "top5"
LANG_MODES = ("utterance", "both")
TOOL_LANGS = ("ko", "en", "both")
MAX_TOKENS = 512  # a tool call needs far fewer; the cap only bounds a rambling answer
SYSTEM_PROMPT = ("You route requests on a device. Call exactly one of the provided tools: "
                 "the one that best fits the user's request.")
RECORD_COLUMNS = ["checkpoint", "condition", "utterance_id", "lang", "n_offered", "chosen", "n_calls",
                  "no_tool_call", "malformed", "error", "latency_ms"]
LOG_TAIL_CHARS = 4000  # how much of a server log the deployment JSON keeps
STOP_GRACE_S = 30.0  # vLLM shuts its engine down on SIGTERM; give it this long before SIGKILL

# Failure stages, most specific first: the first stage with a pattern found
# anywhere in the captured text wins, so a root cause printed early in a log
# (e.g. CUDA out of memory) beats the generic exit line that follows it.
FAILURE_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("vllm_not_importable", (
        r"No module named '?vllm",                  # ModuleNotFoundError: vLLM not installed in this interpreter
        r"cannot import name '?\w+'? from '?vllm",  # a partial or mismatched install
        r"vllm/_C\.abi3\.so|vllm\._C\b",            # compiled extension built for another torch/CUDA
    )),
    ("no_cuda_device", (
        r"No CUDA GPUs are available",              # torch: RuntimeError when CUDA_VISIBLE_DEVICES hides all
        r"no CUDA-capable device is detected",      # CUDA runtime error 100
        r"Found no NVIDIA driver on your system",   # torch without a driver
        r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
        r"Failed to infer device type",             # vLLM finds no platform (CPU-only machine)
        r"CUDA driver initialization failed",
        r"no CUDA device",                          # our own pre-flight message
    )),
    ("out_of_memory", (
        r"CUDA out of memory",                      # torch.OutOfMemoryError text
        r"OutOfMemoryError",
        r"CUDA error: out of memory",
        r"No available memory for the cache blocks",  # vLLM: weights fit, KV cache does not
        r"larger than the maximum number of tokens that can be stored in KV cache",
        r"KV cache is needed, which is larger than the available KV cache memory",
    )),
    ("parser_unavailable", (
        r"invalid tool call parser",                # vLLM: KeyError('invalid tool call parser: x (chose from {...})')
        r"--tool-call-parser: invalid choice",      # older vLLM: argparse choices
        r"unrecognized arguments:.*--(enable-auto-tool-choice|tool-call-parser)",  # vLLM without tool calling
    )),
    ("weights_unavailable", (                       # the weights could not be fetched (offline, gated, typo)
        r"GatedRepoError", r"RepositoryNotFoundError", r"RevisionNotFoundError", r"LocalEntryNotFoundError",
        r"couldn't connect to '?https://huggingface\.co", r"OfflineModeIsEnabled",
        r"does not appear to have a file named",
    )),
    ("weights_not_admitted", (                      # vLLM (or transformers under it) refuses the checkpoint
        r"AmbiguousGlobalPerLayerAttributeError",   # transformers >= 5.15 per-layer configs (Gemma 4) in older vLLM
        r"Model architectures? \[.*\] (are|is) not supported",
        r"are not supported for now",
        r"does not recognize this architecture",    # transformers too old for the checkpoint's model_type
        r"Unrecognized model in",
        r"Unknown quantization method",
        r"is not supported for the current GPU",    # quantization kernels need a newer compute capability
        r"Bfloat16 is only supported on GPUs with compute capability",
    )),
    ("readiness_timeout", (r"not ready after \d+", r"readiness timeout")),
    ("server_exited", (r"exited with code", r"exited before it was ready")),
)
STAGES = tuple(s for s, _ in FAILURE_PATTERNS) + ("unknown",)


class DeploymentError(RuntimeError):
    """A checkpoint did not come up; ``stage`` is one of :data:`STAGES`, ``text`` the captured evidence."""

    def __init__(self, stage: str, text: str):
        self.stage, self.text = stage, text
        super().__init__(f"{stage}: {short_error(text)}")


# ---------------------------------------------------------------- catalog -> OpenAI tools


def _text(value, lang: str) -> str:
    """A ``{lang: text}`` map (or a plain string) in ``lang``; ``both`` joins "ko / en".

    A missing language falls back to the other one, so catalogs imported in one
    language (``io.import_openai_tools``) still give every tool a description.
    """
    if isinstance(value, str):
        return value
    if lang == "both":
        return " / ".join(dict.fromkeys(t for t in (value.get(l, "") for l in io.LANGS) if t))
    return value.get(lang) or next((value[l] for l in io.LANGS if value.get(l)), "")


def _parameters(schema: dict, lang: str) -> dict:
    """The tool's JSON Schema with every ``{lang: text}`` description made a string."""
    props = {}
    for name, spec in schema.get("properties", {}).items():
        spec = dict(spec)
        if "description" in spec:
            spec["description"] = _text(spec["description"], lang)
        props[name] = spec
    return {"type": "object", "properties": props, "required": list(schema.get("required", []))}


def openai_tools(actions: list[dict], lang: str) -> list[dict]:
    """OpenAI ``tools`` entries for catalog rows, in their order; the function name is the catalog id."""
    if lang not in TOOL_LANGS:
        raise InputError("native", f"unknown tool language '{lang}' (known: {', '.join(TOOL_LANGS)})")
    return [{"type": "function",
             "function": {"name": t["id"],
                          "description": f"{_text(t['names'], lang)}: {_text(t['descriptions'], lang)}",
                          "parameters": _parameters(t["parameters"], lang)}} for t in actions]


def build_request(text: str, tools: list[dict], model: str, chat_template_kwargs: dict | None = None,
                  max_tokens: int = MAX_TOKENS) -> dict:
    """One chat-completions body: system prompt, the utterance, the tools, a call required.

    Temperature 0 makes the routing decision greedy and repeatable. Chat-template
    options (e.g. ``enable_thinking: false``) ride along in the body, which vLLM
    and llama.cpp server both read, so they also apply in endpoint mode.
    """
    body = {"model": model,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}],
            "tools": tools, "tool_choice": "required", "temperature": 0, "max_tokens": max_tokens}
    if chat_template_kwargs:
        body["chat_template_kwargs"] = dict(chat_template_kwargs)
    return body


# ---------------------------------------------------------------- responses


def parse_response(obj: dict, offered=None) -> dict:
    """Called tool names, and whether the answer had no call or a malformed one.

    ``malformed``: a call's arguments are not a JSON object, or its name is not
    among ``offered`` (when given). An empty argument string counts as ``{}``:
    some servers send it for a call without parameters. Raises ValueError for a
    body that is not a chat completion (no ``choices``).
    """
    choices = obj.get("choices") if isinstance(obj, dict) else None
    if not choices:
        raise ValueError(f"not a chat completion: {json.dumps(obj)[:200]}")
    message = choices[0].get("message") or {}
    calls = message.get("tool_calls") or []
    offered = None if offered is None else set(offered)
    names, malformed = [], False
    for call in calls:
        fn = (call or {}).get("function") or {}
        name = fn.get("name")
        names.append(name if isinstance(name, str) else "")
        if not isinstance(name, str) or (offered is not None and name not in offered):
            malformed = True
        if not _arguments_ok(fn.get("arguments")):
            malformed = True
    return {"tools": names, "no_tool_call": not calls, "malformed": malformed, "n_calls": len(calls)}


def _arguments_ok(args) -> bool:
    if isinstance(args, dict) or args is None:
        return True
    if not isinstance(args, str):
        return False
    if not args.strip():
        return True
    try:
        return isinstance(json.loads(args), dict)
    except json.JSONDecodeError:
        return False


# ---------------------------------------------------------------- failure stages and environment


def _find(text: str) -> tuple[str, str]:
    """(stage, the last line that shows it); ("unknown", "") when nothing matches."""
    lines = text.splitlines()
    for stage, patterns in FAILURE_PATTERNS:
        rx = re.compile("|".join(f"(?:{p})" for p in patterns))
        hits = [l for l in lines if rx.search(l)]
        if hits:
            return stage, hits[-1]
    return "unknown", ""


def classify_failure(text: str) -> str:
    """The failure stage for captured launcher or vLLM error text (see :data:`FAILURE_PATTERNS`)."""
    return _find(text or "")[0]


def short_error(text: str, n: int = 300) -> str:
    """The most telling line of an error text, at most ``n`` characters.

    The line that decided the stage when there is one, else the last line that
    names an error, else the last line; vLLM's ``(APIServer pid=..)`` prefix is dropped.
    """
    text = text or ""
    _, line = _find(text)
    if not line:
        lines = [l for l in text.splitlines() if l.strip()]
        errs = [l for l in lines if re.search(r"Error|Exception|error:", l)]
        line = (errs or lines or [""])[-1]
    line = re.sub(r"^\s*\(\w+ pid=\d+\)\s*", "", line).strip()
    return line if len(line) <= n else line[: n - 3] + "..."


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


def _opener(url: str) -> urllib.request.OpenerDirector:
    """A URL opener that bypasses proxies for loopback hosts (a proxy cannot reach our server)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    return urllib.request.build_opener(urllib.request.ProxyHandler({})) if loopback else urllib.request.build_opener()


def _get(url: str, timeout: float = 5.0):
    """(status, parsed JSON or None); (None, None) when nothing answers."""
    try:
        with _opener(url).open(url, timeout=timeout) as resp:
            body = resp.read()
            status = resp.status
    except urllib.error.HTTPError as exc:
        return exc.code, None
    except (urllib.error.URLError, OSError, ValueError):
        return None, None
    try:
        return status, json.loads(body or b"null")
    except json.JSONDecodeError:
        return status, None


def is_ready(base_url: str) -> bool:
    """GET /health (vLLM, llama.cpp) or, failing that, /v1/models answers 200."""
    return _get(f"{base_url}/health")[0] == 200 or _get(f"{base_url}/v1/models")[0] == 200


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
def serving(entry: dict, log_path, readiness_timeout_s: float = 600, endpoint: str = "", poll_s: float = 1.0):
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


# ---------------------------------------------------------------- client


def served_model(base_url: str, wanted: str) -> str:
    """``wanted`` when the server lists it (or lists nothing), else the first model it serves.

    An endpoint started by the user may serve the checkpoint under another name
    (llama.cpp server, ``--served-model-name``).
    """
    _, obj = _get(f"{base_url}/v1/models")
    ids = [m.get("id") for m in (obj or {}).get("data", []) if isinstance(m, dict)] if isinstance(obj, dict) else []
    return wanted if not ids or wanted in ids else ids[0]


def post_chat(base_url: str, body: dict, timeout_s: float) -> dict:
    """POST one chat-completions body; the parsed JSON answer. Raises RuntimeError with the server's message."""
    url = f"{base_url}/v1/chat/completions"
    headers = {"Content-Type": "application/json"}
    if os.environ.get("TOOLGATE_API_KEY"):
        headers["Authorization"] = f"Bearer {os.environ['TOOLGATE_API_KEY']}"
    req = urllib.request.Request(url, json.dumps(body).encode("utf-8"), headers, method="POST")
    try:
        with _opener(url).open(req, timeout=timeout_s) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")
        with contextlib.suppress(json.JSONDecodeError, AttributeError, TypeError):
            err = json.loads(detail)
            detail = (err.get("error") or err) if isinstance(err, dict) else detail
            detail = detail.get("message", detail) if isinstance(detail, dict) else detail
        raise RuntimeError(f"HTTP {exc.code}: {str(detail)[:300]}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise RuntimeError(f"request failed: {getattr(exc, 'reason', exc)}") from None
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"answer is not JSON: {exc}") from None


def call_one(base_url: str, job: dict, timeout_s: float) -> dict:
    """One utterance through the server: a record (see :data:`RECORD_COLUMNS`)."""
    offered = [t["function"]["name"] for t in job["request"]["tools"]]
    rec = {"checkpoint": job.get("checkpoint", ""), "condition": job["condition"], "utterance_id": job["utterance_id"],
           "lang": job.get("lang", ""), "n_offered": len(offered), "chosen": "", "n_calls": 0,
           "no_tool_call": False, "malformed": False, "error": ""}
    t0 = time.perf_counter()
    try:
        parsed = parse_response(post_chat(base_url, job["request"], timeout_s), offered)
    except (RuntimeError, ValueError) as exc:
        rec["error"] = str(exc)[:300]
    else:
        rec.update(chosen=";".join(parsed["tools"]), n_calls=parsed["n_calls"], no_tool_call=parsed["no_tool_call"],
                   malformed=parsed["malformed"])
    rec["latency_ms"] = (time.perf_counter() - t0) * 1000.0
    return rec


def run_requests(base_url: str, jobs: list[dict], concurrency: int = 8, timeout_s: float = 60) -> list[dict]:
    """Every job through the server, at most ``concurrency`` in flight; records in job order."""
    with ThreadPoolExecutor(max_workers=max(1, int(concurrency))) as pool:
        return list(pool.map(lambda j: call_one(base_url, j, timeout_s), jobs))


# ---------------------------------------------------------------- one checkpoint


def shortlists(rows: list[dict], lexical: Scores, k: int = SHORTLIST_K) -> dict[str, list[str]]:
    """The lexical top-k actions per utterance (ties keep catalog order, as in :mod:`toolgate.rerank`)."""
    pos = {u: i for i, u in enumerate(lexical.utterance_ids)}
    missing = [r["utterance_id"] for r in rows if r["utterance_id"] not in pos]
    if missing:
        raise InputError("lexical scores", f"no scores for utterance '{missing[0]}' ({len(missing)} missing)")
    ids = lexical.tool_ids[lexical.actions]
    order = np.argsort(-lexical.action_scores(), axis=1, kind="stable")[:, :k]
    return {r["utterance_id"]: [str(ids[j]) for j in order[pos[r["utterance_id"]]]] for r in rows}


def build_jobs(catalog: list[dict], rows: list[dict], shortlist: dict, condition: str, model: str,
               lang_mode: str = "utterance", chat_template_kwargs: dict | None = None, checkpoint: str = "") -> list[dict]:
    """One request per utterance: ``full`` offers every action (catalog order), ``top5`` the shortlist (rank order)."""
    if condition not in CONDITIONS:
        raise InputError("config", f"unknown condition '{condition}' (known: {', '.join(CONDITIONS)})", field="native.conditions")
    if lang_mode not in LANG_MODES:
        raise InputError("config", f"unknown tool language '{lang_mode}' (known: {', '.join(LANG_MODES)})",
                         field="native.tool_language")
    acts = catalog_actions(catalog)
    by_lang = {lang: openai_tools(acts, lang) for lang in (io.LANGS if lang_mode == "utterance" else ("both",))}
    jobs = []
    for r in rows:
        tools = by_lang[r["lang"] if lang_mode == "utterance" else "both"]
        if condition == "top5":
            by_id = {t["function"]["name"]: t for t in tools}
            unknown = [i for i in shortlist.get(r["utterance_id"], []) if i not in by_id]
            if r["utterance_id"] not in shortlist or unknown:
                raise InputError("shortlist", f"no usable shortlist for '{r['utterance_id']}'")
            tools = [by_id[i] for i in shortlist[r["utterance_id"]]]
        jobs.append({"checkpoint": checkpoint, "condition": condition, "utterance_id": r["utterance_id"],
                     "lang": r["lang"], "request": build_request(r["text"], tools, model, chat_template_kwargs)})
    return jobs


def _check_entry(name: str, entry: dict, endpoint: str) -> None:
    """A roster entry needs a model; a vLLM launch also needs its tool-call parser."""
    for key in ("model",) + (() if entry.get("command") or endpoint else ("parser",)):
        if not entry.get(key):
            raise InputError("config", "missing required field", field=f"native.roster.{name}.{key}")


def _write_records(path, records: list[dict]) -> None:
    df = pd.DataFrame(records, columns=RECORD_COLUMNS)
    io.write_atomic(path, df.to_csv(index=False, float_format="%.3f", lineterminator="\n"))


def run_checkpoint(catalog: list[dict], rows: list[dict], shortlist: dict, entry: dict, conditions,
                   out_records_csv, out_deployment_json, server_log, endpoint: str = "", concurrency: int = 8,
                   readiness_timeout_s: float = 600, request_timeout_s: float = 60,
                   lang_mode: str = "utterance") -> dict:
    """Serve one checkpoint, route every utterance under each condition, stop the server.

    Returns the deployment record (also written to ``out_deployment_json``).
    Deployment failures never raise: they are recorded (deployed false, stage,
    captured error text, environment) with an empty records file, so the
    workflow completes on a machine without vLLM or a GPU. Bad config still
    raises InputError before anything starts.
    """
    name = entry.get("name") or entry.get("model", "")
    _check_entry(name, entry, endpoint)
    conditions = list(conditions)
    model = entry["model"]
    ctk = entry.get("chat_template_kwargs") or None
    jobs = {c: build_jobs(catalog, rows, shortlist, c, model, lang_mode, ctk, name) for c in conditions}
    dep = {"checkpoint": name, "model": model, "revision": entry.get("revision") or "", "parser": entry.get("parser") or "",
           "endpoint": endpoint, "conditions": conditions, "deployed": False, "stage": "", "error": "",
           "environment": environment()}
    records: list[dict] = []
    try:
        with serving(entry, server_log, readiness_timeout_s, endpoint) as server:
            dep.update(deployed=True, stage="ok", ready_s=round(server.ready_s, 2), command=server.command,
                       served_model=served_model(server.base_url, model))
            for cond in conditions:
                for j in jobs[cond]:
                    j["request"]["model"] = dep["served_model"]
                t0 = time.perf_counter()
                recs = run_requests(server.base_url, jobs[cond], concurrency, request_timeout_s)
                log.info("%s/%s: %d requests in %.1f s, %d errors", name, cond, len(recs), time.perf_counter() - t0,
                         sum(bool(r["error"]) for r in recs))
                records += recs
            dep["server_alive_after_run"] = server.alive()
    except DeploymentError as exc:
        log.warning("%s not deployed (%s): %s", name, exc.stage, short_error(exc.text))
        dep.update(deployed=False, stage=exc.stage, error=exc.text, records_discarded=len(records))
        records = []
    dep["n_records"] = len(records)
    dep["n_errors"] = sum(bool(r["error"]) for r in records)
    _write_records(out_records_csv, records)
    io.write_json(out_deployment_json, dep)
    return dep


def write_native_calls(catalog_path, utterances_path, lexical_path, checkpoint: str, entry: dict, conditions,
                       out_records_csv, out_deployment_json, server_log, endpoint: str = "", concurrency: int = 8,
                       readiness_timeout_s: float = 600, request_timeout_s: float = 60,
                       lang_mode: str = "utterance", langs=io.LANGS) -> dict:
    """Load the inputs, build the lexical top-5 shortlist, run one checkpoint (the ``native_calls`` rule)."""
    catalog = io.load_catalog(catalog_path, langs)
    rows = io.load_utterances(utterances_path, catalog, langs)
    shortlist = shortlists(rows, load_scores(lexical_path))
    return run_checkpoint(catalog, rows, shortlist, {**entry, "name": checkpoint}, conditions, out_records_csv,
                          out_deployment_json, server_log, endpoint, concurrency, readiness_timeout_s,
                          request_timeout_s, lang_mode)


# ---------------------------------------------------------------- tables


def read_records(path) -> pd.DataFrame:
    """A records CSV with empty strings kept as such (not NaN)."""
    df = pd.read_csv(path, dtype={"chosen": str, "error": str, "utterance_id": str}, keep_default_na=False)
    for col in ("no_tool_call", "malformed"):
        df[col] = df[col].astype(str).str.lower().eq("true")
    return df


def deployment_frame(deployments: list[dict]) -> pd.DataFrame:
    recs = []
    for d in deployments:
        env = d.get("environment", {})
        recs.append({"checkpoint": d.get("checkpoint", ""), "model": d.get("model", ""), "parser": d.get("parser", ""),
                     "deployed": bool(d.get("deployed")), "stage": d.get("stage", ""),
                     "error": "" if d.get("deployed") else short_error(d.get("error", "")),
                     "vllm": env.get("vllm", ""), "gpu": env.get("gpu", ""), "gpu_memory": env.get("gpu_memory", ""),
                     "driver": env.get("driver", "")})
    return pd.DataFrame(recs, columns=["checkpoint", "model", "parser", "deployed", "stage", "error", "vllm", "gpu",
                                       "gpu_memory", "driver"])


def lexical_gap(rows: list[dict], lexical: Scores, k: int = SHORTLIST_K) -> tuple[float, float]:
    """(top-1 accuracy, top-k recall) of the lexical ranker over in-catalog utterances."""
    inrows = [r for r in rows if r["gold_tool"] is not None]
    if not inrows:
        return float("nan"), float("nan")
    sl = shortlists(inrows, lexical, k)
    top1 = np.mean([sl[r["utterance_id"]][0] == r["gold_tool"] for r in inrows])
    topk = np.mean([r["gold_tool"] in sl[r["utterance_id"]] for r in inrows])
    return float(top1), float(topk)


CALL_COLUMNS = ["checkpoint", "model", "condition", "n", "n_in_catalog", "n_errors", "accuracy", "no_tool_call_rate",
                "malformed_rate", "median_latency_ms", "bm25_top1", "bm25_top5", "recovered_share"]


def native_tables(deployments: list[dict], records: list[pd.DataFrame], rows: list[dict],
                  lexical: Scores, k: int = SHORTLIST_K) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(native_deployment, native_calls) frames; calls only for checkpoints that deployed."""
    gold = {r["utterance_id"]: r["gold_tool"] for r in rows}
    top1, topk = lexical_gap(rows, lexical, k)
    recs = []
    for dep, df in zip(deployments, records):
        if not dep.get("deployed") or df.empty:
            continue
        for cond in [c for c in CONDITIONS if c in set(df["condition"])]:
            m = df[df["condition"] == cond]
            first = m["chosen"].fillna("").str.split(";").str[0]
            g = m["utterance_id"].map(gold)
            inc = g.notna()
            ok = m["error"].fillna("").eq("")
            acc = float((first[inc] == g[inc]).mean()) if inc.any() else float("nan")
            rec = {"checkpoint": dep.get("checkpoint", ""), "model": dep.get("model", ""), "condition": cond,
                   "n": len(m), "n_in_catalog": int(inc.sum()), "n_errors": int((~ok).sum()), "accuracy": acc,
                   "no_tool_call_rate": float(m.loc[ok, "no_tool_call"].mean()) if ok.any() else float("nan"),
                   "malformed_rate": float(m.loc[ok, "malformed"].mean()) if ok.any() else float("nan"),
                   "median_latency_ms": float(m.loc[ok, "latency_ms"].median()) if ok.any() else float("nan"),
                   "bm25_top1": top1, "bm25_top5": topk, "recovered_share": float("nan")}
            if cond == "top5" and topk > top1:
                rec["recovered_share"] = (acc - top1) / (topk - top1)
            recs.append(rec)
    return deployment_frame(deployments), pd.DataFrame(recs, columns=CALL_COLUMNS)


def write_native_tables(catalog_path, utterances_path, lexical_path, deployment_paths, record_paths,
                        out_deployment_csv, out_calls_csv, langs=io.LANGS, seed=None):
    """The ``native_tables`` rule: paper Table 7 (deployment) and the native-caller accuracy table."""
    catalog = io.load_catalog(catalog_path, langs)
    rows = io.load_utterances(utterances_path, catalog, langs)
    deployments = [json.loads(Path(p).read_text(encoding="utf-8")) for p in deployment_paths]
    records = [read_records(p) for p in record_paths]
    dep_df, calls_df = native_tables(deployments, records, rows, load_scores(lexical_path))
    write_table(dep_df, out_deployment_csv, "Native tool calling: deployment outcomes (paper Table 7)",
                "One row per roster checkpoint served by vLLM with tool_choice=\"required\". A row with deployed "
                "false is a deployment outcome, not an accuracy result: stage names where it failed (vLLM not "
                "importable, no CUDA device, weights not admitted, parser unavailable, out of memory, readiness "
                "timeout, ...) and error is the shortened captured text (full text in results/*/native/"
                "<checkpoint>.deployment.json). vllm, gpu, gpu_memory and driver describe the machine that ran it.",
                seed)
    write_table(calls_df, out_calls_csv, "Native tool calling: accuracy with the full catalog and the BM25 top-5",
                "Only checkpoints that deployed. accuracy: first called tool = gold tool over in-catalog utterances "
                "(failed requests count as wrong); no_tool_call_rate and malformed_rate over the answers received; "
                "recovered_share (top5) = (accuracy - bm25_top1) / (bm25_top5 - bm25_top1). The paper reports "
                "no-tool-call rates of 14.3% (full) and 9.8% (top-5) for LFM2.5-2.6B and a recovered share of "
                "86.3%. Non-deployed checkpoints appear in native_deployment as deployment outcomes, not here "
                "as accuracy results.", seed)
    return dep_df, calls_df
