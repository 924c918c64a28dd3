"""Native tool calling, what the protocol finds on a server that came up (or did not): a rejected tool_choice, a
template that drops the tools, every request failed, an endpoint that is down. Stand-in endpoints answer as the
servers were recorded answering (llama-cpp-python 0.3.36; tests/native_real runs the real one)."""
import json

import pandas as pd
import pytest

from native_fixtures import lexical_scores, native_section, outputs, sample_rows, serve_standin, standin  # noqa: F401
from toolgate.native import run
from toolgate.native.protocol import PROTOCOL_CHECK
from toolgate.native.server import free_port
from toolgate.native.tables import native_tables, read_records
from toolgate.native.tournament_run import run_tournament, tournament_frame
from toolgate.report.build import tournament_blocks

from .test_tournament import tournament_rows, tournament_section


def _run(catalog, tmp_path, url, entry=None, **settings):
    """run_checkpoint in endpoint mode on the sample rows; (deployment record, records frame, calls table)."""
    rows = sample_rows()
    lex = lexical_scores(rows, catalog)
    out = outputs(tmp_path)
    native = native_section(**{"endpoint": url, "readiness_timeout_s": 5, "request_timeout_s": 10, **settings})
    dep = run.run_checkpoint(catalog, rows, run.shortlists(rows, lex), {"name": "c", "model": "org/x", **(entry or {})},
                             out, native)
    assert json.loads(out.deployment.read_text()) == dep
    df = read_records(out.records)
    return dep, df, native_tables([dep], [df], rows, lex)[1].set_index("condition")


def test_a_rejected_tool_choice_is_a_deployment_outcome_naming_it(small_catalog, tmp_path):
    with serve_standin("llama") as url:
        dep, df, calls = _run(small_catalog, tmp_path, url)
    assert not dep["deployed"] and dep["stage"] == "tool_choice_rejected" and df.empty and calls.empty
    first = dep["error"].splitlines()[0]
    assert first == ("the server rejected tool_choice='required': HTTP 500 internal_server_error: (empty message) "
                     "(the same request with tool_choice='auto' was answered)")
    assert '"type": "internal_server_error"' in dep["error"] and "tool_choice_fallback: true" in dep["error"]
    assert dep["server"] == f"endpoint {url} (its models are owned_by 'me')"


def test_the_fallback_to_auto_runs_and_says_so(small_catalog, tmp_path):
    with serve_standin("llama") as url:
        dep, df, calls = _run(small_catalog, tmp_path, url, {"tool_choice_fallback": True})
    assert dep["deployed"] and dep["stage"] == "ok"
    assert (dep["tool_choice"], dep["tool_choice_used"]) == ("required", "auto")
    assert dep["tool_choice_note"].startswith("the server rejected tool_choice='required'")
    assert set(df["tool_choice"]) == {"auto"} and df["error"].eq("").all()
    assert list(calls["tool_choice"]) == ["auto", "auto"] and calls.loc["full", "accuracy"] == 1.0


def test_a_template_that_drops_the_tools_is_not_counted_as_declines(small_catalog, tmp_path):
    with serve_standin("dropper") as url:
        dep, df, calls = _run(small_catalog, tmp_path, url)
    assert dep["deployed"] and dep["stage"] == "tools_dropped"
    assert dep["error"].startswith("the server's template dropped the tools: all 10 answers came from prompts "
                                   "shorter than their tools block (e.g. 31 prompt tokens where the tools alone need")
    assert df["tools_dropped"].all() and df["no_tool_call"].all() and (df["prompt_tokens"] < df["tools_floor"]).all()
    assert set(df["answer"]) == {"Sure, I can help."} and set(df["finish_reason"]) == {"stop"}
    full = calls.loc["full"]
    assert full["n_tools_dropped"] == 5 and pd.isna(full["no_tool_call_rate"]) and pd.isna(full["accuracy"])
    assert full["not_computable"] == "not computable: the server's template dropped the tools in all 5 answers"


def test_all_requests_failed_computes_nothing(small_catalog, tmp_path):
    """Once recovered_share came out -4.0 and stage ok with every request failed."""
    with serve_standin("broken") as url:
        dep, df, calls = _run(small_catalog, tmp_path, url)
    assert dep["deployed"] and dep["stage"] == "all_requests_failed" and dep["n_errors"] == 10
    assert dep["error"].startswith("all 10 requests failed; the first: HTTP 500 internal_server_error: boom")
    assert set(df["error"]) == {"HTTP 500 internal_server_error: boom"} and df["error_body"].str.contains('"boom"').all()
    top5 = calls.loc["top5"]
    assert top5["bm25_top5"] > top5["bm25_top1"]  # a gap that a failed run once divided into -4.0
    assert pd.isna(top5["recovered_share"]) and pd.isna(top5["accuracy"]) and top5["n_errors"] == 5
    assert top5["not_computable"] == "not computable: nothing was answered (all 5 requests failed)"


def test_a_protocol_check_gives_no_accuracy(small_catalog, tmp_path, standin):
    dep, df, calls = _run(small_catalog, tmp_path, standin, {"protocol_check": True})
    assert dep["stage"] == "ok" and dep["protocol_check"] and df["error"].eq("").all()
    assert calls["label"].eq(PROTOCOL_CHECK).all() and calls["accuracy"].isna().all()
    assert calls["recovered_share"].isna().all() and calls["not_computable"].str.contains("protocol check").all()
    assert calls.loc["full", "no_tool_call_rate"] == pytest.approx(1 / 5)  # the protocol outcomes are kept
    assert calls.loc["full", "median_prompt_tokens"] > 0


def test_an_unreachable_endpoint_is_recorded_by_both_rules(small_catalog, tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    dep, df, calls = _run(small_catalog, tmp_path, url, readiness_timeout_s=1)
    assert not dep["deployed"] and dep["stage"] == "readiness_timeout" and df.empty and calls.empty
    assert f"server at {url} not ready after 1 s" in dep["error"]
    native = native_section(endpoint=url, readiness_timeout_s=1)
    tdep, recs = run_tournament(small_catalog, tournament_rows(), {"name": "c", "model": "m"}, outputs(tmp_path, "t.jsonl"), native,
                                tournament_section())
    table = tournament_frame(tdep, recs, tournament_rows())
    assert table.loc[0, "status"] == "not run" and table.loc[0, "reason"].startswith("readiness_timeout: server at")
    assert table.loc[0, "server"] == f"endpoint {url}"


def test_tournament_all_failed_and_protocol_check(small_catalog, tmp_path):
    rows, out = tournament_rows(), outputs(tmp_path, "t.jsonl")
    with serve_standin("broken") as url:
        dep, recs = run_tournament(small_catalog, rows, {"name": "c", "model": "m"}, out,
                                   native_section(endpoint=url, readiness_timeout_s=5), tournament_section())
    assert dep["stage"] == "all_requests_failed" and all(r["error_body"] for r in recs)
    table = tournament_frame(dep, recs, rows)
    assert table["status"].eq("all requests failed").all() and table["top1"].isna().all()
    assert table.loc[0, "reason"].startswith("not computable: all 6 requests failed (HTTP 500 internal_server_error")
    text = tournament_blocks({"tournament": table})[1][1]
    assert f"served by endpoint {url}: all requests failed (not computable: all 6 requests failed" in text
    with serve_standin() as url:
        dep, recs = run_tournament(small_catalog, rows, {"name": "c", "model": "m", "protocol_check": True}, out,
                                   native_section(endpoint=url, readiness_timeout_s=5), tournament_section())
    by = {r["utterance_id"]: r for r in recs}
    assert by["u1-en"]["answers"] == ["A"] and by["u1-en"]["finish_reasons"] == ["stop"]  # 3 options, one group
    table = tournament_frame(dep, recs, rows)
    assert table["label"].eq(PROTOCOL_CHECK).all() and table["top1"].isna().all() and table["mrr"].isna().all()
    text = tournament_blocks({"tournament": table})[1][1]
    assert f"served by endpoint {url} (its models are owned_by 'vllm'): a {PROTOCOL_CHECK}; " in text
    assert "top-1" not in text and "MRR" not in text
