"""Native tool calling: request building, response parsing, failure stages, and the client protocol.

Nothing here runs a model. The stand-in endpoint answers with a canned tool call
chosen from the tools it is offered: it proves the plumbing (request shape,
concurrency, ordering, recording, server lifecycle), not any model's routing.
"""
import importlib.util
import json
import os
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pandas as pd
import pytest

from conftest import tool, utterance, write_jsonl
from toolgate import native
from toolgate.errors import InputError
from toolgate.selection import Scores, save_scores

# ---------------------------------------------------------------- fixtures


def _rows():
    """In-catalog rows whose text names the gold tool (the stand-in picks a named tool), plus a chat row."""
    rows = [utterance(1, "set_alarm"), utterance(2, "make_call", lang="ko"), utterance(3, "check_battery"),
            utterance(4, None, outcome="chat", slice_="out")]
    for r in rows:
        r["text"] = f"please {r['gold_tool'] or 'chat'} now"
    rows.append({**utterance(5, "make_call"), "text": "garble make_call"})  # the stand-in answers malformed
    return rows


def _lexical(rows, catalog):
    """Lexical scores that rank the gold tool first except for u2 (gold second) - a hand-made top-1/top-5 gap."""
    ids = [t["id"] for t in catalog]
    m = np.zeros((len(rows), len(ids)))
    for i, r in enumerate(rows):
        m[i, ids.index("check_battery")] = 1.0
        if r["gold_tool"]:
            m[i, ids.index(r["gold_tool"])] = 2.0 if r["utterance_id"] != "u2-ko" else 0.5
    return Scores(np.array([r["utterance_id"] for r in rows]), np.array(ids), np.array([t["kind"] for t in catalog]), m)


def _choice(tool_calls=None, content=None):
    return {"id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if tool_calls else "stop",
                         "message": {"role": "assistant", "content": content, "tool_calls": tool_calls or []}}]}


def _call(name, arguments='{"x": "7am"}'):
    return {"id": "call_0", "type": "function", "function": {"name": name, "arguments": arguments}}


# ---------------------------------------------------------------- request building


def test_openai_tools_from_catalog(small_catalog):
    acts = [t for t in small_catalog if t["kind"] == "action"]
    tools = native.openai_tools(acts, "en")
    assert [t["function"]["name"] for t in tools] == ["set_alarm", "make_call", "check_battery"]
    fn = tools[0]["function"]
    assert tools[0]["type"] == "function"
    assert fn["description"] == "set alarm: Does set_alarm."
    assert fn["parameters"]["required"] == ["x"]
    assert fn["parameters"]["properties"]["x"] == {"type": "string", "description": "x"}
    ko = native.openai_tools(acts, "ko")[0]["function"]
    assert ko["description"] == "알람: 설명입니다."
    both = native.openai_tools(acts, "both")[0]["function"]
    assert both["description"] == "알람 / set alarm: 설명입니다. / Does set_alarm."
    assert both["parameters"]["properties"]["x"]["description"] == "x"  # identical ko/en text listed once
    assert tools[2]["function"]["parameters"]["required"] == []
    with pytest.raises(InputError):
        native.openai_tools(acts, "fr")


def test_openai_tools_keep_enum_and_string_descriptions():
    t = tool("toggle_wifi")
    t["parameters"]["properties"]["state"] = {"type": "string", "description": "on or off", "enum": ["on", "off"]}
    t["parameters"]["required"] = ["state"]
    t["descriptions"] = {"en": "Turns Wi-Fi on or off."}  # a one-language catalog: ko falls back to en
    fn = native.openai_tools([t], "ko")[0]["function"]
    assert fn["parameters"]["properties"]["state"] == {"type": "string", "description": "on or off", "enum": ["on", "off"]}
    assert fn["parameters"]["required"] == ["state"]
    assert fn["description"].endswith("Turns Wi-Fi on or off.")
    assert "description" in json.dumps(fn)  # serialisable as a request body


def test_build_request_requires_a_tool_call(small_catalog):
    tools = native.openai_tools(small_catalog[:3], "en")
    body = native.build_request("wake me at 7", tools, "m", {"enable_thinking": False})
    assert body["tool_choice"] == "required"
    assert body["tools"] is tools and body["model"] == "m" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "exactly one" in body["messages"][0]["content"]
    assert body["messages"][1]["content"] == "wake me at 7"
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in native.build_request("x", tools, "m")


def test_build_jobs_full_and_top5_in_the_utterance_language(small_catalog):
    rows = _rows()
    sl = native.shortlists(rows, _lexical(rows, small_catalog))
    assert sl["u2-ko"][:2] == ["check_battery", "make_call"]  # rank order, catalog order for ties
    full = native.build_jobs(small_catalog, rows, sl, "full", "m")
    top5 = native.build_jobs(small_catalog, rows, sl, "top5", "m")
    assert [len(j["request"]["tools"]) for j in full] == [3] * len(rows)  # route entries are never offered
    assert [t["function"]["name"] for t in top5[1]["request"]["tools"]] == sl["u2-ko"]
    assert full[1]["request"]["tools"][0]["function"]["description"].startswith("알람")  # the ko utterance
    assert full[0]["request"]["tools"][0]["function"]["description"].startswith("set alarm")
    both = native.build_jobs(small_catalog, rows, sl, "full", "m", lang_mode="both")
    assert " / " in both[0]["request"]["tools"][0]["function"]["description"]
    with pytest.raises(InputError, match="native.conditions"):
        native.build_jobs(small_catalog, rows, sl, "top3", "m")
    with pytest.raises(InputError, match="native.tool_language"):
        native.build_jobs(small_catalog, rows, sl, "full", "m", lang_mode="fr")


def test_server_command_for_vllm():
    entry = {"model": "org/m", "revision": "abc", "parser": "hermes", "dtype": "bfloat16", "max_model_len": 4096,
             "chat_template_kwargs": {"enable_thinking": False}, "extra_args": ["--gpu-memory-utilization", "0.8"]}
    cmd = native.server_command(entry, 8123)
    assert cmd[:3] == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    s = " ".join(cmd)
    for part in ("--model org/m", "--host 127.0.0.1", "--port 8123", "--enable-auto-tool-choice",
                 "--tool-call-parser hermes", "--dtype bfloat16", "--max-model-len 4096", "--revision abc",
                 '--default-chat-template-kwargs {"enable_thinking": false}', "--gpu-memory-utilization 0.8"):
        assert part in s
    assert native.server_command({"command": ["srv", "--port", "{port}"]}, 9) == ["srv", "--port", "9"]


# ---------------------------------------------------------------- parsing recorded responses


def test_parse_response_one_call():
    p = native.parse_response(_choice([_call("set_alarm")]), {"set_alarm", "make_call"})
    assert p == {"tools": ["set_alarm"], "no_tool_call": False, "malformed": False, "n_calls": 1}


def test_parse_response_no_call():
    p = native.parse_response(_choice(content="Sure, what time?"), {"set_alarm"})
    assert p["no_tool_call"] and not p["malformed"] and p["tools"] == [] and p["n_calls"] == 0


def test_parse_response_malformed_arguments():
    p = native.parse_response(_choice([_call("set_alarm", '{"x": "7am"')]), {"set_alarm"})
    assert p["malformed"] and p["tools"] == ["set_alarm"] and not p["no_tool_call"]
    assert native.parse_response(_choice([_call("set_alarm", '["x"]')]))["malformed"]  # not an object
    assert not native.parse_response(_choice([_call("set_alarm", "")]))["malformed"]  # empty = no arguments
    assert not native.parse_response(_choice([_call("set_alarm", {"x": 1})]))["malformed"]  # already decoded


def test_parse_response_unknown_tool_name():
    p = native.parse_response(_choice([_call("send_email")]), {"set_alarm", "make_call"})
    assert p["malformed"] and p["tools"] == ["send_email"]
    assert not native.parse_response(_choice([_call("send_email")]))["malformed"]  # no offered set given


def test_parse_response_several_calls():
    p = native.parse_response(_choice([_call("set_alarm"), _call("make_call", "{}")]), {"set_alarm", "make_call"})
    assert p["tools"] == ["set_alarm", "make_call"] and p["n_calls"] == 2 and not p["malformed"]


def test_parse_response_rejects_an_error_body():
    with pytest.raises(ValueError):
        native.parse_response({"object": "error", "message": "maximum context length is 4096 tokens"})


# ---------------------------------------------------------------- failure stages

AMBIGUOUS = """\
(APIServer pid=7) INFO 08-18 12:46:45 [api_utils.py:273] non-default args: {'model': 'google/gemma-4-E2B-it', 'max_model_len': 4096}
(APIServer pid=7) Traceback (most recent call last):
(APIServer pid=7)   File "vllm/transformers_utils/model_arch_config_convertor.py", line 575, in get_head_size
(APIServer pid=7)     head_dim = getattr(self.hf_text_config, "head_dim", 0)
(APIServer pid=7) transformers.integrations.heterogeneity.configuration_utils.AmbiguousGlobalPerLayerAttributeError: 'head_dim' is a per-layer attribute and may vary across layers. Access it via the individual layer configs instead (e.g. config.per_layer_config[i].head_dim).
server exited with code 1 before it was ready
"""

PARSER = """\
(APIServer pid=966592)   File "vllm/entrypoints/openai/api_server.py", line 1893, in validate_api_server_args
(APIServer pid=966592)     raise KeyError(f"invalid tool call parser: {args.tool_call_parser} "
(APIServer pid=966592) KeyError: 'invalid tool call parser: granite_pythonic (chose from { deepseek_v3, granite, hermes, llama3_json, mistral, pythonic, xlam })'
"""

OOM = """\
INFO 05-02 10:11:12 [gpu_model_runner.py:1580] Model loading took 14.99 GiB and 6.2 seconds
ERROR 05-02 10:11:30 [core.py:586] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.12 GiB is free.
RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}
"""

KV = ("ValueError: To serve at least one request with the models's max seq len (131072), (16.0 GiB KV cache is needed, "
      "which is larger than the available KV cache memory (9.3 GiB). Try increasing `gpu_memory_utilization`")


@pytest.mark.parametrize("text,stage", [
    (AMBIGUOUS, "weights_not_admitted"),
    (PARSER, "parser_unavailable"),
    ("vllm serve: error: argument --tool-call-parser: invalid choice: 'llama3_json' (choose from 'mistral', 'hermes')",
     "parser_unavailable"),
    (OOM, "out_of_memory"),
    (KV, "out_of_memory"),
    ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`", "out_of_memory"),
    ("Traceback (most recent call last):\n  File \"<frozen runpy>\", line 189\nModuleNotFoundError: No module named 'vllm'",
     "vllm_not_importable"),
    ("ImportError: /venv/lib/python3.11/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
     "vllm_not_importable"),
    ("RuntimeError: No CUDA GPUs are available", "no_cuda_device"),
    ("RuntimeError: Failed to infer device type", "no_cuda_device"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
     "driver is installed and running.", "no_cuda_device"),
    ("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, Model "
     "architectures ['Lfm2ForCausalLM'] are not supported for now. Supported architectures: dict_keys([...])",
     "weights_not_admitted"),
    ("ValueError: The checkpoint you are trying to load has model type `lfm2` but Transformers does not recognize this "
     "architecture.", "weights_not_admitted"),
    ("huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo for url "
     "https://huggingface.co/google/gemma-4-E2B-it/resolve/main/config.json.", "weights_unavailable"),
    ("server at http://127.0.0.1:40000 not ready after 600 s (readiness timeout)\nINFO Loading weights", "readiness_timeout"),
    ("server exited with code -9 before it was ready\nINFO Starting vLLM API server", "server_exited"),
    ("Segmentation fault", "unknown"),
    ("", "unknown"),
])
def test_classify_failure(text, stage):
    assert native.classify_failure(text) == stage
    assert stage in native.STAGES


def test_short_error_picks_the_deciding_line():
    s = native.short_error(AMBIGUOUS)
    assert s.startswith("transformers.integrations") and "AmbiguousGlobalPerLayerAttributeError" in s
    assert len(s) <= 300
    assert len(native.short_error(AMBIGUOUS, 100)) == 100 and native.short_error(AMBIGUOUS, 100).endswith("...")
    assert native.short_error(PARSER).startswith("KeyError: 'invalid tool call parser: granite_pythonic")
    assert native.short_error("a\nb\nValueError: boom\nexit") == "ValueError: boom"


def test_environment_reports_vllm_and_gpu():
    env = native.environment()
    assert {"vllm", "gpu", "gpu_memory", "driver"} <= set(env)
    if importlib.util.find_spec("vllm") is None:
        assert env["vllm"] == "not installed"


# ---------------------------------------------------------------- protocol test: a stand-in endpoint

STANDIN = textwrap.dedent('''
    import json, random, sys, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        """Stand-in OpenAI-compatible endpoint: canned answers chosen from the offered tools, no model."""

        def _send(self, code, obj):
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path in ("/health", "/v1/models"):
                return self._send(200, {"object": "list", "data": [{"id": "stand-in", "object": "model"}]})
            self._send(404, {"error": {"message": "not found"}})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/chat/completions" or body.get("tool_choice") != "required":
                return self._send(400, {"object": "error", "message": "expected tool_choice=required"})
            time.sleep(random.random() * 0.02)  # answers finish out of order
            text = body["messages"][-1]["content"]
            names = [t["function"]["name"] for t in body["tools"]]
            named = [n for n in names if n in text]
            if "chat" in text.split():
                msg = {"role": "assistant", "content": "Hello!", "tool_calls": []}
            else:
                args = '{"x": ' if "garble" in text else "{}"
                name = named[0] if named else names[0]
                msg = {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c0", "type": "function", "function": {"name": name, "arguments": args}}]}
            self._send(200, {"object": "chat.completion", "model": body["model"],
                             "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls"}]})

        def log_message(self, *args):
            pass

    def serve(port):
        ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()

    if __name__ == "__main__":
        serve(int(sys.argv[1]))
''')
_ns: dict = {}
exec(compile(STANDIN, "standin", "exec"), _ns)


@pytest.fixture
def standin():
    """A stand-in endpoint in a thread on 127.0.0.1 (protocol test: proves the plumbing, not a model)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ns["Handler"])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_protocol_client_against_standin(standin, small_catalog):
    """Protocol test: the client posts chat-completions and records answers in input order (no model involved)."""
    rows = _rows()
    jobs = native.build_jobs(small_catalog, rows, {}, "full", "stand-in", checkpoint="c")
    assert native.is_ready(standin) and native.served_model(standin, "org/x") == "stand-in"
    recs = native.run_requests(standin, jobs, concurrency=4, timeout_s=10)
    assert [r["utterance_id"] for r in recs] == [r["utterance_id"] for r in rows]
    by = {r["utterance_id"]: r for r in recs}
    assert by["u1-en"]["chosen"] == "set_alarm" and by["u2-ko"]["chosen"] == "make_call"
    assert by["u4-en"]["no_tool_call"] and by["u4-en"]["chosen"] == ""
    assert by["u5-en"]["malformed"] and by["u5-en"]["chosen"] == "make_call"
    assert all(r["n_offered"] == 3 and r["error"] == "" and r["latency_ms"] > 0 for r in recs)


def test_protocol_client_records_http_errors(standin, small_catalog):
    """Protocol test: a rejected request is recorded with the server's message, not raised."""
    job = native.build_jobs(small_catalog, _rows()[:1], {}, "full", "stand-in")[0]
    job["request"]["tool_choice"] = "auto"
    rec = native.call_one(standin, job, 10)
    assert rec["error"].startswith("HTTP 400") and "tool_choice=required" in rec["error"]
    closed = f"http://127.0.0.1:{native.free_port()}"
    assert native.call_one(closed, job, 2)["error"].startswith("request failed")


def test_protocol_run_checkpoint_endpoint_mode(standin, small_catalog, tmp_path):
    """Protocol test: run_checkpoint in endpoint mode, then both tables (numbers are the stand-in's, not a model's)."""
    rows = _rows()
    lex = _lexical(rows, small_catalog)
    sl = native.shortlists(rows, lex)
    out = tmp_path / "native"
    dep = native.run_checkpoint(small_catalog, rows, sl, {"name": "c1", "model": "org/x", "parser": "hermes"},
                                ["full", "top5"], out / "c1.records.csv", out / "c1.deployment.json",
                                tmp_path / "c1.server.log", endpoint=standin + "/v1", concurrency=3,
                                readiness_timeout_s=5, request_timeout_s=10)
    assert dep["deployed"] and dep["stage"] == "ok" and dep["served_model"] == "stand-in"
    assert json.loads((out / "c1.deployment.json").read_text())["n_records"] == 2 * len(rows)
    df = native.read_records(out / "c1.records.csv")
    assert list(df.columns) == native.RECORD_COLUMNS
    assert list(df["condition"]) == ["full"] * len(rows) + ["top5"] * len(rows)
    assert list(df["utterance_id"][: len(rows)]) == [r["utterance_id"] for r in rows]
    assert (df.loc[df["condition"] == "top5", "n_offered"] == 3).all()  # 3 actions, so the top-5 holds all
    dep_df, calls = native.native_tables([dep], [df], rows, lex)
    assert dep_df.loc[0, "deployed"] and dep_df.loc[0, "error"] == ""
    c = calls.set_index("condition")
    assert c.loc["full", "n"] == 5 and c.loc["full", "n_in_catalog"] == 4
    assert c.loc["full", "accuracy"] == 1.0  # the stand-in echoes the tool the text names
    assert c.loc["full", "no_tool_call_rate"] == pytest.approx(1 / 5)
    assert c.loc["full", "malformed_rate"] == pytest.approx(1 / 5)
    assert c.loc["top5", "bm25_top1"] == pytest.approx(3 / 4) and c.loc["top5", "bm25_top5"] == 1.0
    assert c.loc["top5", "recovered_share"] == pytest.approx((1.0 - 0.75) / (1.0 - 0.75))
    assert np.isnan(c.loc["full", "recovered_share"])


def test_protocol_server_lifecycle_with_a_standin_process(small_catalog, tmp_path):
    """Protocol test: start a stand-in server process, wait for readiness, route, stop it (no model, no GPU)."""
    script = tmp_path / "standin.py"
    script.write_text(STANDIN)
    rows = _rows()
    entry = {"name": "proc", "model": "org/x", "command": [sys.executable, str(script), "{port}"]}
    sl = native.shortlists(rows, _lexical(rows, small_catalog))
    dep = native.run_checkpoint(small_catalog, rows, sl, entry, ["top5"], tmp_path / "r.csv", tmp_path / "d.json",
                                tmp_path / "server.log", readiness_timeout_s=20, request_timeout_s=10)
    assert dep["deployed"] and dep["n_records"] == len(rows) and dep["server_alive_after_run"]
    assert (tmp_path / "server.log").read_text().startswith("$ ")
    assert dep["command"][-1].isdigit()


def test_server_exit_is_classified_from_its_log(tmp_path):
    code = "import sys; print(\"KeyError: 'invalid tool call parser: granite_pythonic (chose from { hermes })'\"); sys.exit(1)"
    entry = {"model": "m", "command": [sys.executable, "-c", code]}
    with pytest.raises(native.DeploymentError) as exc:
        with native.serving(entry, tmp_path / "s.log", readiness_timeout_s=20, poll_s=0.1):
            pass
    assert exc.value.stage == "parser_unavailable"
    assert "exited with code 1" in exc.value.text and "granite_pythonic" in exc.value.text


def test_readiness_timeout_stops_the_server(tmp_path):
    pidfile = tmp_path / "pid"
    code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    entry = {"model": "m", "command": [sys.executable, "-c", code]}
    t0 = time.monotonic()
    with pytest.raises(native.DeploymentError) as exc:
        with native.serving(entry, tmp_path / "s.log", readiness_timeout_s=2, poll_s=0.1):
            pass
    assert exc.value.stage == "readiness_timeout"
    assert time.monotonic() - t0 < 20
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_body_failure_still_stops_the_server(tmp_path):
    script = tmp_path / "standin.py"
    script.write_text(STANDIN)
    entry = {"model": "m", "command": [sys.executable, str(script), "{port}"]}
    with pytest.raises(KeyError):
        with native.serving(entry, tmp_path / "s.log", readiness_timeout_s=20, poll_s=0.1) as server:
            proc = server.proc
            raise KeyError("client bug")
    assert proc.poll() is not None


# ---------------------------------------------------------------- deployment failure on this machine


def _gpu_and_vllm():
    try:
        native.preflight()
    except native.DeploymentError:
        return False
    return True


@pytest.mark.skipif(_gpu_and_vllm(), reason="vLLM and a GPU are present: a real launch is not a unit test")
def test_run_checkpoint_without_vllm_records_the_outcome(small_catalog, tmp_path):
    rows = _rows()
    sl = native.shortlists(rows, _lexical(rows, small_catalog))
    entry = {"name": "lfm", "model": "LiquidAI/LFM2.5-2.6B", "parser": "pythonic", "dtype": "bfloat16",
             "max_model_len": 4096}
    dep = native.run_checkpoint(small_catalog, rows, sl, entry, ["full", "top5"], tmp_path / "r.csv",
                                tmp_path / "d.json", tmp_path / "s.log", readiness_timeout_s=5)
    saved = json.loads((tmp_path / "d.json").read_text())
    assert saved["deployed"] is False and saved["stage"] in ("vllm_not_importable", "no_cuda_device")
    assert saved["error"] and saved["environment"]["vllm"]
    df = pd.read_csv(tmp_path / "r.csv")
    assert df.empty and list(df.columns) == native.RECORD_COLUMNS
    dep_df, calls = native.native_tables([dep], [native.read_records(tmp_path / "r.csv")], rows,
                                         _lexical(rows, small_catalog))
    assert not dep_df.loc[0, "deployed"] and dep_df.loc[0, "stage"] == saved["stage"] and dep_df.loc[0, "error"]
    assert calls.empty and list(calls.columns) == native.CALL_COLUMNS


def test_bad_roster_entry_is_an_input_error(small_catalog, tmp_path):
    with pytest.raises(InputError, match="native.roster.x.parser"):
        native.run_checkpoint(small_catalog, _rows(), {}, {"name": "x", "model": "m"}, ["full"], tmp_path / "r.csv",
                              tmp_path / "d.json", tmp_path / "s.log")


def test_write_native_tables(small_catalog, tmp_path):
    rows = _rows()
    cat = write_jsonl(tmp_path / "catalog.jsonl", small_catalog)
    utt = write_jsonl(tmp_path / "utterances.jsonl", rows)
    save_scores(tmp_path / "bm25.npz", _lexical(rows, small_catalog))
    dep = {"checkpoint": "g", "model": "google/gemma-4-E2B-it", "parser": "pythonic", "deployed": False,
           "stage": "weights_not_admitted", "error": AMBIGUOUS,
           "environment": {"vllm": "0.27.1", "gpu": "NVIDIA H200", "gpu_memory": "143771 MiB", "driver": "570.1"}}
    (tmp_path / "g.deployment.json").write_text(json.dumps(dep))
    (tmp_path / "g.records.csv").write_text(",".join(native.RECORD_COLUMNS) + "\n")
    dep_df, calls = native.write_native_tables(cat, utt, tmp_path / "bm25.npz", [tmp_path / "g.deployment.json"],
                                               [tmp_path / "g.records.csv"], tmp_path / "t" / "native_deployment.csv",
                                               tmp_path / "t" / "native_calls.csv")
    assert dep_df.loc[0, "gpu"] == "NVIDIA H200" and "AmbiguousGlobalPerLayerAttributeError" in dep_df.loc[0, "error"]
    assert calls.empty
    md = (tmp_path / "t" / "native_deployment.md").read_text()
    assert "deployment outcome, not an accuracy result" in md and "weights_not_admitted" in md
    calls_md = (tmp_path / "t" / "native_calls.md").read_text()
    assert "14.3%" in calls_md and "9.8%" in calls_md and "86.3%" in calls_md
    assert pd.read_csv(tmp_path / "t" / "native_calls.csv").empty
