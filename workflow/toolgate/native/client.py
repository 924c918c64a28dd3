"""The HTTP side: standard-library requests to an OpenAI-compatible server, many in flight.

``urllib`` only, so nothing beyond the server itself is needed. A failed request
is recorded (``error``), never raised: one bad answer must not end a run.
"""
from __future__ import annotations

import ipaddress
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from .protocol import parse_response, tools_floor

RECORD_COLUMNS = ["checkpoint", "condition", "utterance_id", "lang", "tool_choice", "n_offered", "chosen", "n_calls",
                  "no_tool_call", "malformed", "tools_dropped", "tools_floor", "prompt_tokens", "completion_tokens",
                  "finish_reason", "error", "error_body", "latency_ms", "answer", "tool_calls"]
BODY_CHARS = 500  # how much of a failed request's answer body a record keeps


class ServerError(RuntimeError):
    """A request the server answered with an HTTP error: its status, the error's type and message, and the first
    :data:`BODY_CHARS` characters of the body as sent."""

    def __init__(self, status: int, type_: str, message: str, body: str):
        self.status, self.type, self.message, self.body = status, type_, message, body[:BODY_CHARS]
        super().__init__(f"HTTP {status} {type_ or 'error'}: {message or '(empty message)'}")


def server_error(status: int, body: str) -> ServerError:
    """The :class:`ServerError` for an HTTP error answer: OpenAI's ``{"error": {"message", "type"}}``, vLLM's flat
    ``{"message", "type"}``, FastAPI's ``{"detail"}``, or a body that is not JSON (kept as the body only)."""
    try:
        obj = json.loads(body)
    except json.JSONDecodeError:
        obj = None
    err = obj.get("error", obj) if isinstance(obj, dict) else None
    err = err if isinstance(err, dict) else {"message": err if isinstance(err, str) else ""}
    message = err.get("message") or err.get("detail") or ""
    return ServerError(status, str(err.get("type") or err.get("code") or ""), str(message)[:300], body)


def opener(url: str) -> urllib.request.OpenerDirector:
    """A URL opener that bypasses proxies for loopback hosts (a proxy cannot reach our server)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    return urllib.request.build_opener(urllib.request.ProxyHandler({})) if loopback else urllib.request.build_opener()


def http_get(url: str, timeout: float = 5.0):
    """(status, parsed JSON or None); (None, None) when nothing answers."""
    try:
        with opener(url).open(url, timeout=timeout) as resp:
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


def served_model(base_url: str, wanted: str) -> tuple[str, str]:
    """(model, owner): ``wanted`` when the server lists it (or lists nothing), else the first model it serves,
    with that entry's ``owned_by`` ("" when not given; vLLM says "vllm", llama-server "llamacpp").

    A server may serve the checkpoint under another name (llama.cpp takes the
    file's path, vLLM ``--served-model-name``).
    """
    _, obj = http_get(f"{base_url}/v1/models")
    models = [m for m in (obj or {}).get("data", []) if isinstance(m, dict)] if isinstance(obj, dict) else []
    chosen = next((m for m in models if m.get("id") == wanted), models[0] if models else {"id": wanted})
    return str(chosen.get("id")), str(chosen.get("owned_by") or "")


def post_chat(base_url: str, body: dict, timeout_s: float) -> dict:
    """POST one chat-completions body; the parsed JSON answer. Raises :class:`ServerError` for an HTTP error,
    RuntimeError when nothing answers or the answer is not JSON."""
    url = f"{base_url}/v1/chat/completions"
    headers = {"Content-Type": "application/json"}
    if os.environ.get("TOOLGATE_API_KEY"):
        headers["Authorization"] = f"Bearer {os.environ['TOOLGATE_API_KEY']}"
    req = urllib.request.Request(url, json.dumps(body).encode("utf-8"), headers, method="POST")
    try:
        with opener(url).open(req, timeout=timeout_s) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        raise server_error(exc.code, exc.read().decode("utf-8", "replace")) from None
    except (urllib.error.URLError, OSError) as exc:
        raise RuntimeError(f"request failed: {getattr(exc, 'reason', exc)}") from None
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"answer is not JSON: {exc}") from None


def failure(exc: Exception) -> dict:
    """A failed request's record fields: the error (type and message) and the start of the answer's body."""
    return {"error": str(exc)[:400], "error_body": getattr(exc, "body", "")}


def call_one(base_url: str, job: dict, timeout_s: float) -> dict:
    """One utterance through the server: a record (see :data:`RECORD_COLUMNS`).

    ``tools_dropped``: the server reported fewer prompt tokens than the tools
    block needs (``tools_floor``, :func:`~.protocol.tools_floor`), so its chat
    template left the tools out and the answer says nothing about tool calling.
    """
    tools = job["request"]["tools"]
    offered = [t["function"]["name"] for t in tools]
    rec = {"checkpoint": job.get("checkpoint", ""), "condition": job["condition"], "utterance_id": job["utterance_id"],
           "lang": job.get("lang", ""), "tool_choice": job["request"].get("tool_choice", ""), "n_offered": len(offered),
           "chosen": "", "n_calls": 0, "no_tool_call": False, "malformed": False, "tools_dropped": False,
           "tools_floor": tools_floor(tools), "prompt_tokens": None, "completion_tokens": None, "finish_reason": "",
           "error": "", "error_body": "", "latency_ms": 0.0, "answer": "", "tool_calls": ""}
    t0 = time.perf_counter()
    try:
        parsed = parse_response(post_chat(base_url, job["request"], timeout_s), offered)
    except (RuntimeError, ValueError) as exc:
        rec.update(failure(exc))
    else:
        rec.update({k: parsed[k] for k in ("n_calls", "no_tool_call", "malformed", "prompt_tokens", "completion_tokens",
                                           "finish_reason", "answer", "tool_calls")}, chosen=";".join(parsed["tools"]))
        rec["tools_dropped"] = rec["prompt_tokens"] is not None and rec["prompt_tokens"] < rec["tools_floor"]
    rec["latency_ms"] = (time.perf_counter() - t0) * 1000.0
    return rec


def run_requests(base_url: str, jobs: list[dict], concurrency: int, timeout_s: float, call=call_one) -> list[dict]:
    """Every job through the server with ``call(base_url, job, timeout_s)`` (a record), at most ``concurrency`` in
    flight; records in job order.

    Jobs are sent grouped by language (stable): requests of one language share the tools block, and a server
    that keeps the last prompt's cache (llama.cpp) then evaluates it once per language, not once per request.
    """
    order = sorted(range(len(jobs)), key=lambda i: jobs[i].get("lang", ""))
    with ThreadPoolExecutor(max_workers=max(1, int(concurrency))) as pool:
        sent = list(pool.map(lambda i: call(base_url, jobs[i], timeout_s), order))
    records = [None] * len(jobs)
    for i, rec in zip(order, sent):
        records[i] = rec
    return records
