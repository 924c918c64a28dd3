"""Native tool calling, the HTTP client against a stand-in endpoint (protocol tests: no model involved)."""
import json

from native_fixtures import (  # noqa: F401
    LLAMA_CPP_CALL,
    LLAMA_CPP_CONTEXT,
    LLAMA_CPP_DROPPED,
    LLAMA_CPP_MALFORMED,
    LLAMA_CPP_REJECTED,
    sample_rows,
    standin,
)
from toolgate.native import client
from toolgate.native.run import build_jobs
from toolgate.native.server import free_port, is_ready


def test_protocol_client_against_standin(standin, small_catalog):
    """Protocol test: the client posts chat-completions and records answers in input order (no model involved)."""
    rows = sample_rows()
    jobs = build_jobs(small_catalog, rows, {}, "full", {"model": "stand-in", "name": "c"}, "utterance")
    assert is_ready(standin) == "/health" and client.served_model(standin, "org/x") == ("stand-in", "vllm")
    recs = client.run_requests(standin, jobs, concurrency=4, timeout_s=10)
    assert [r["utterance_id"] for r in recs] == [r["utterance_id"] for r in rows]
    by = {r["utterance_id"]: r for r in recs}
    assert by["u1-en"]["chosen"] == "set_alarm" and by["u2-ko"]["chosen"] == "make_call"
    assert by["u4-en"]["no_tool_call"] and by["u4-en"]["chosen"] == ""
    assert by["u5-en"]["malformed"] and by["u5-en"]["chosen"] == "make_call"
    assert all(r["n_offered"] == 3 and r["error"] == "" and r["latency_ms"] > 0 for r in recs)
    assert all(list(r) == client.RECORD_COLUMNS for r in recs)
    # auditable: the server's token counts, finish_reason, the answer's text and its calls as sent
    assert all(r["prompt_tokens"] > r["tools_floor"] > 0 and r["completion_tokens"] == 9 for r in recs)
    assert by["u1-en"]["finish_reason"] == "tool_calls" and by["u4-en"]["answer"] == "Hello!"
    assert '"name": "set_alarm"' in by["u1-en"]["tool_calls"] and by["u4-en"]["tool_calls"] == ""
    assert by["u5-en"]["tool_calls"].endswith('"arguments": "{\\"x\\": "}}]')  # the malformed arguments, kept
    assert not any(r["tools_dropped"] for r in recs) and {r["tool_choice"] for r in recs} == {"required"}


def test_protocol_client_records_http_errors(standin, small_catalog):
    """Protocol test: a rejected request is recorded with the server's error type, message and body, not raised."""
    job = build_jobs(small_catalog, sample_rows()[:1], {}, "full", {"model": "stand-in"}, "utterance")[0]
    job["request"]["tool_choice"] = "none"
    rec = client.call_one(standin, job, 10)
    assert rec["error"] == "HTTP 400 BadRequestError: expected tool_choice=required"
    assert json.loads(rec["error_body"])["object"] == "error" and rec["prompt_tokens"] is None
    closed = f"http://127.0.0.1:{free_port()}"
    assert client.call_one(closed, job, 2)["error"].startswith("request failed")


def test_server_errors_keep_type_message_and_body():
    """Error bodies as servers send them (llama-cpp-python's empty AssertionError message, vLLM, FastAPI, HTML)."""
    llama = json.dumps({"error": {"message": "", "type": "internal_server_error", "param": None, "code": None}})
    err = client.server_error(500, llama)
    assert str(err) == "HTTP 500 internal_server_error: (empty message)" and err.body == llama
    ctx = client.server_error(400, json.dumps({"error": {
        "message": "This model's maximum context length is 512 tokens. However, you requested 2143 tokens (1631 in "
                   "the messages, 512 in the completion).", "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded"}}))
    assert str(ctx).startswith("HTTP 400 invalid_request_error: This model's maximum context length is 512 tokens")
    assert str(client.server_error(404, '{"detail":"Not Found"}')) == "HTTP 404 error: Not Found"
    html = "<html>" + "x" * 900 + "</html>"
    err = client.server_error(502, html)
    assert str(err) == "HTTP 502 error: (empty message)" and err.body == html[:500] and len(err.body) == 500


def test_requests_go_grouped_by_language_and_records_keep_job_order():
    """A single-slot prompt cache (llama.cpp) evaluates a language's tools block once if its requests go together."""
    jobs = [{"lang": lang, "i": i} for i, lang in enumerate(["ko", "en", "ko", "en", "en"])]
    sent = []
    recs = client.run_requests("http://x", jobs, 1, 1, call=lambda url, job, t: sent.append(job["i"]) or job["i"])
    assert sent == [1, 3, 4, 0, 2] and recs == [0, 1, 2, 3, 4]


def test_recorded_llama_cpp_answers(small_catalog, monkeypatch):
    """llama-cpp-python's answers as recorded: a call, a malformed call, a template that dropped the tools, errors."""
    catalog = small_catalog + [{**small_catalog[0], "id": "compress_files"}]
    job = build_jobs(catalog, sample_rows()[:1], {}, "full", {"model": "m", "tool_choice": "auto"}, "utterance")[0]
    job["request"]["tools"] *= 3  # a tools block of about 400 tokens: floor between the dropped 47 and the real 497
    for answer, want in ((LLAMA_CPP_CALL, {"chosen": "set_alarm", "malformed": False, "tools_dropped": False}),
                         (LLAMA_CPP_MALFORMED, {"chosen": "compress_files", "malformed": True, "tools_dropped": False}),
                         (LLAMA_CPP_DROPPED, {"chosen": "", "no_tool_call": True, "tools_dropped": True})):
        monkeypatch.setattr(client, "post_chat", lambda url, body, timeout, a=answer: a)
        rec = client.call_one("http://127.0.0.1:9", job, 1)
        assert {k: rec[k] for k in want} == want and rec["tool_choice"] == "auto"
        usage = answer["usage"]
        assert (rec["prompt_tokens"], rec["completion_tokens"]) == (usage["prompt_tokens"], usage["completion_tokens"])
        assert rec["finish_reason"] == answer["choices"][0]["finish_reason"] and 47 < rec["tools_floor"] < 497
    assert rec["answer"].startswith('You can use the "Battery" tool')
    assert str(client.server_error(500, LLAMA_CPP_REJECTED)) == "HTTP 500 internal_server_error: (empty message)"
    ctx = client.server_error(400, LLAMA_CPP_CONTEXT)
    assert "maximum context length is 1024 tokens" in str(ctx) and ctx.type == "invalid_request_error"
