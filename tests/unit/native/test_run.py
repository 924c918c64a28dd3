"""Native tool calling, one checkpoint end to end: jobs, shortlists, run_checkpoint (stand-in servers, no model)."""
import json
import sys
from types import SimpleNamespace

import pandas as pd
import pytest

from conftest import write_jsonl
from native_fixtures import lexical_scores, native_section, outputs, sample_rows, standin, standin_script  # noqa: F401
from toolgate.config import run as run_config
from toolgate.core.errors import InputError
from toolgate.core.scores import save_scores
from toolgate.experiment import Experiment
from toolgate.native import run
from toolgate.native.backends import preflight
from toolgate.native.client import RECORD_COLUMNS
from toolgate.native.protocol import DeploymentError
from toolgate.native.tables import CALL_COLUMNS, native_tables, read_records

M = {"model": "m"}  # a roster entry


def test_build_jobs_full_and_top5_in_the_utterance_language(small_catalog):
    rows = sample_rows()
    sl = run.shortlists(rows, lexical_scores(rows, small_catalog))
    assert sl["u2-ko"][:2] == ["check_battery", "make_call"]  # rank order, catalog order for ties
    full = run.build_jobs(small_catalog, rows, sl, "full", M, "utterance")
    top5 = run.build_jobs(small_catalog, rows, sl, "top5", M, "utterance")
    assert [len(j["request"]["tools"]) for j in full] == [3] * len(rows)  # route entries are never offered
    assert [t["function"]["name"] for t in top5[1]["request"]["tools"]] == sl["u2-ko"]
    assert full[1]["request"]["tools"][0]["function"]["description"].startswith("알람")  # the ko utterance
    assert full[0]["request"]["tools"][0]["function"]["description"].startswith("set alarm")
    both = run.build_jobs(small_catalog, rows, sl, "full", M, "both")
    assert " / " in both[0]["request"]["tools"][0]["function"]["description"]
    with pytest.raises(InputError, match="native.conditions"):
        run.build_jobs(small_catalog, rows, sl, "top3", M, "utterance")
    with pytest.raises(InputError, match="native.tool_language"):
        run.build_jobs(small_catalog, rows, sl, "full", M, "fr")


def test_shortlists_need_scores_for_every_utterance(small_catalog):
    rows = sample_rows()
    sl = run.shortlists(rows, lexical_scores(rows, small_catalog))
    assert list(sl) == [r["utterance_id"] for r in rows]
    assert all(isinstance(i, str) for ids in sl.values() for i in ids)
    with pytest.raises(InputError, match="no scores for utterance 'u5-en'"):
        run.shortlists(rows, lexical_scores(rows[:4], small_catalog))


def test_protocol_run_checkpoint_endpoint_mode(standin, small_catalog, tmp_path):
    """Protocol test: run_checkpoint in endpoint mode, then both tables (numbers are the stand-in's, not a model's)."""
    rows = sample_rows()
    lex = lexical_scores(rows, small_catalog)
    sl = run.shortlists(rows, lex)
    out = tmp_path / "native"
    native = native_section(conditions=["full", "top5"], endpoint=standin + "/v1", concurrency=3,
                            readiness_timeout_s=5, request_timeout_s=10)
    dep = run.run_checkpoint(small_catalog, rows, sl, {"name": "c1", "model": "org/x", "parser": "hermes"},
                             SimpleNamespace(records=out / "c1.records.csv", deployment=out / "c1.deployment.json",
                                             server_log=tmp_path / "c1.server.log"), native)
    assert dep["deployed"] and dep["stage"] == "ok" and dep["served_model"] == "stand-in"
    assert json.loads((out / "c1.deployment.json").read_text())["n_records"] == 2 * len(rows)
    df = read_records(out / "c1.records.csv")
    assert list(df.columns) == RECORD_COLUMNS
    assert list(df["condition"]) == ["full"] * len(rows) + ["top5"] * len(rows)
    assert list(df["utterance_id"][: len(rows)]) == [r["utterance_id"] for r in rows]
    assert (df.loc[df["condition"] == "top5", "n_offered"] == 3).all()  # 3 actions, so the top-5 holds all
    dep_df, calls = native_tables([dep], [df], rows, lex)
    assert dep_df.loc[0, "deployed"] and dep_df.loc[0, "error"] == ""
    c = calls.set_index("condition")
    assert c.loc["full", "n"] == 5 and c.loc["full", "n_in_catalog"] == 4
    assert c.loc["full", "accuracy"] == 1.0  # the stand-in echoes the tool the text names
    assert c.loc["full", "no_tool_call_rate"] == pytest.approx(1 / 5)
    assert c.loc["full", "malformed_rate"] == pytest.approx(1 / 5)
    assert c.loc["top5", "bm25_top1"] == pytest.approx(3 / 4) and c.loc["top5", "bm25_top5"] == 1.0
    assert c.loc["top5", "recovered_share"] == pytest.approx((1.0 - 0.75) / (1.0 - 0.75))
    assert pd.isna(c.loc["full", "recovered_share"])


def test_protocol_server_lifecycle_with_a_standin_process(small_catalog, tmp_path):
    """Protocol test: start a stand-in server process, wait for readiness, route, stop it (no model, no GPU)."""
    rows = sample_rows()
    entry = {"name": "proc", "model": "org/x", "command": [sys.executable, str(standin_script(tmp_path)), "{port}"]}
    sl = run.shortlists(rows, lexical_scores(rows, small_catalog))
    native = native_section(conditions=["top5"], readiness_timeout_s=20, request_timeout_s=10)
    dep = run.run_checkpoint(small_catalog, rows, sl, entry, outputs(tmp_path), native)
    assert dep["deployed"] and dep["n_records"] == len(rows) and dep["server_alive_after_run"]
    assert (tmp_path / "server.log").read_text().startswith("$ ")
    assert dep["command"][-1].isdigit()


def test_write_native_calls_names_the_checkpoint(standin, small_catalog, tmp_path):
    """Protocol test: the rule's entry point loads the inputs and records under the wildcard's name."""
    rows = sample_rows()
    cat = write_jsonl(tmp_path / "catalog.jsonl", small_catalog)
    utt = write_jsonl(tmp_path / "utterances.jsonl", rows)
    save_scores(tmp_path / "bm25.npz", lexical_scores(rows, small_catalog))
    out = outputs(tmp_path, "c.records.csv")
    exp = Experiment(SimpleNamespace(entry={"model": "org/x", "parser": "hermes"}, run=run_config(0, ["ko", "en"]),
                                     native=native_section(endpoint=standin, readiness_timeout_s=5,
                                                           request_timeout_s=10)),
                     SimpleNamespace(catalog=cat, utterances=utt, lexical=tmp_path / "bm25.npz"), out)
    dep = run.write_native_calls(exp, "c", out.server_log)
    assert dep["checkpoint"] == "c" and dep["conditions"] == ["full", "top5"]
    assert set(read_records(out.records)["checkpoint"]) == {"c"}


# ---------------------------------------------------------------- deployment failure on this machine


def _gpu_and_vllm():
    try:
        preflight()
    except DeploymentError:
        return False
    return True


@pytest.mark.skipif(_gpu_and_vllm(), reason="vLLM and a GPU are present: a real launch is not a unit test")
def test_run_checkpoint_without_vllm_records_the_outcome(small_catalog, tmp_path):
    rows = sample_rows()
    sl = run.shortlists(rows, lexical_scores(rows, small_catalog))
    entry = {"name": "lfm", "model": "LiquidAI/LFM2.5-2.6B", "parser": "pythonic", "dtype": "bfloat16",
             "max_model_len": 4096}
    native = native_section(conditions=["full", "top5"], readiness_timeout_s=5)
    dep = run.run_checkpoint(small_catalog, rows, sl, entry, outputs(tmp_path), native)
    saved = json.loads((tmp_path / "d.json").read_text())
    assert saved["deployed"] is False and saved["stage"] in ("vllm_not_importable", "no_cuda_device")
    assert saved["error"] and saved["environment"]["vllm"]
    df = pd.read_csv(tmp_path / "r.csv")
    assert df.empty and list(df.columns) == RECORD_COLUMNS
    dep_df, calls = native_tables([dep], [read_records(tmp_path / "r.csv")], rows, lexical_scores(rows, small_catalog))
    assert not dep_df.loc[0, "deployed"] and dep_df.loc[0, "stage"] == saved["stage"] and dep_df.loc[0, "error"]
    assert calls.empty and list(calls.columns) == CALL_COLUMNS


def test_bad_roster_entry_is_an_input_error(small_catalog, tmp_path):
    with pytest.raises(InputError, match="native.roster.x.parser"):
        run.run_checkpoint(small_catalog, sample_rows(), {}, {"name": "x", "model": "m"},
                           outputs(tmp_path),
                           native_section(conditions=["full"]))
    # the parser is vLLM's: llama.cpp, an endpoint or an entry's own command need none
    for settings in ({"server": "llama-cpp"}, {"endpoint": "http://127.0.0.1:9"}):
        run.check_entry("x", {"model": "m"}, native_section(**settings))
    run.check_entry("x", {"model": "m", "command": ["srv"]}, native_section())
    with pytest.raises(InputError, match="native.roster.x.model"):
        run.check_entry("x", {"model": ""}, native_section(server="llama-cpp"))
