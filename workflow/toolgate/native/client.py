"""The HTTP side: standard-library requests to an OpenAI-compatible server, many in flight.

``urllib`` only, so nothing beyond the server itself is needed. A failed request
is recorded (``error``), never raised: one bad answer must not end a run.
"""
from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from .protocol import parse_response

RECORD_COLUMNS = ["checkpoint", "condition", "utterance_id", "lang", "n_offered", "chosen", "n_calls",
                  "no_tool_call", "malformed", "error", "latency_ms"]


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


def served_model(base_url: str, wanted: str) -> str:
    """``wanted`` when the server lists it (or lists nothing), else the first model it serves.

    An endpoint started by the user may serve the checkpoint under another name
    (llama.cpp server, ``--served-model-name``).
    """
    _, obj = http_get(f"{base_url}/v1/models")
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
        with opener(url).open(req, timeout=timeout_s) as resp:
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


def run_requests(base_url: str, jobs: list[dict], concurrency: int, timeout_s: float, call=call_one) -> list[dict]:
    """Every job through the server with ``call(base_url, job, timeout_s)`` (a record), at most ``concurrency`` in
    flight; records in job order."""
    with ThreadPoolExecutor(max_workers=max(1, int(concurrency))) as pool:
        return list(pool.map(lambda j: call(base_url, j, timeout_s), jobs))
