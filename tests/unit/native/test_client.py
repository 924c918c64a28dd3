"""Native tool calling, the HTTP client against a stand-in endpoint (protocol tests: no model involved)."""
from native_fixtures import sample_rows, standin  # noqa: F401  (standin is a fixture)
from toolgate.native import client
from toolgate.native.run import build_jobs
from toolgate.native.server import free_port, is_ready


def test_protocol_client_against_standin(standin, small_catalog):
    """Protocol test: the client posts chat-completions and records answers in input order (no model involved)."""
    rows = sample_rows()
    jobs = build_jobs(small_catalog, rows, {}, "full", "stand-in", "utterance", checkpoint="c")
    assert is_ready(standin) and client.served_model(standin, "org/x") == "stand-in"
    recs = client.run_requests(standin, jobs, concurrency=4, timeout_s=10)
    assert [r["utterance_id"] for r in recs] == [r["utterance_id"] for r in rows]
    by = {r["utterance_id"]: r for r in recs}
    assert by["u1-en"]["chosen"] == "set_alarm" and by["u2-ko"]["chosen"] == "make_call"
    assert by["u4-en"]["no_tool_call"] and by["u4-en"]["chosen"] == ""
    assert by["u5-en"]["malformed"] and by["u5-en"]["chosen"] == "make_call"
    assert all(r["n_offered"] == 3 and r["error"] == "" and r["latency_ms"] > 0 for r in recs)
    assert all(list(r) == client.RECORD_COLUMNS for r in recs)


def test_protocol_client_records_http_errors(standin, small_catalog):
    """Protocol test: a rejected request is recorded with the server's message, not raised."""
    job = build_jobs(small_catalog, sample_rows()[:1], {}, "full", "stand-in", "utterance")[0]
    job["request"]["tool_choice"] = "auto"
    rec = client.call_one(standin, job, 10)
    assert rec["error"].startswith("HTTP 400") and "tool_choice=required" in rec["error"]
    closed = f"http://127.0.0.1:{free_port()}"
    assert client.call_one(closed, job, 2)["error"].startswith("request failed")
