"""Native tool calling, the wire format: tools from the catalog, the request, parsed answers, failure stages."""
import json

import pytest

from conftest import tool
from native_fixtures import AMBIGUOUS
from toolgate.core.errors import InputError
from toolgate.native import protocol


def _choice(tool_calls=None, content=None):
    return {"id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if tool_calls else "stop",
                         "message": {"role": "assistant", "content": content, "tool_calls": tool_calls or []}}]}


def _call(name, arguments='{"x": "7am"}'):
    return {"id": "call_0", "type": "function", "function": {"name": name, "arguments": arguments}}


# ---------------------------------------------------------------- request building


def test_openai_tools_from_catalog(small_catalog):
    acts = [t for t in small_catalog if t["kind"] == "action"]
    tools = protocol.openai_tools(acts, "en")
    assert [t["function"]["name"] for t in tools] == ["set_alarm", "make_call", "check_battery"]
    fn = tools[0]["function"]
    assert tools[0]["type"] == "function"
    assert fn["description"] == "set alarm: Does set_alarm."
    assert fn["parameters"]["required"] == ["x"]
    assert fn["parameters"]["properties"]["x"] == {"type": "string", "description": "x"}
    ko = protocol.openai_tools(acts, "ko")[0]["function"]
    assert ko["description"] == "알람: 설명입니다."
    both = protocol.openai_tools(acts, "both")[0]["function"]
    assert both["description"] == "알람 / set alarm: 설명입니다. / Does set_alarm."
    assert both["parameters"]["properties"]["x"]["description"] == "x"  # identical ko/en text listed once
    assert tools[2]["function"]["parameters"]["required"] == []
    with pytest.raises(InputError):
        protocol.openai_tools(acts, "fr")


def test_openai_tools_keep_enum_and_string_descriptions():
    t = tool("toggle_wifi")
    t["parameters"]["properties"]["state"] = {"type": "string", "description": "on or off", "enum": ["on", "off"]}
    t["parameters"]["required"] = ["state"]
    t["descriptions"] = {"en": "Turns Wi-Fi on or off."}  # a one-language catalog: ko falls back to en
    fn = protocol.openai_tools([t], "ko")[0]["function"]
    assert fn["parameters"]["properties"]["state"] == {"type": "string", "description": "on or off", "enum": ["on", "off"]}
    assert fn["parameters"]["required"] == ["state"]
    assert fn["description"].endswith("Turns Wi-Fi on or off.")
    assert "description" in json.dumps(fn)  # serialisable as a request body


def test_build_request_requires_a_tool_call(small_catalog):
    tools = protocol.openai_tools(small_catalog[:3], "en")
    body = protocol.build_request("wake me at 7", tools, "m", {"enable_thinking": False})
    assert body["tool_choice"] == "required"
    assert protocol.build_request("x", tools, "m", tool_choice="auto")["tool_choice"] == "auto"
    with pytest.raises(InputError, match="unknown tool_choice 'any'"):
        protocol.build_request("x", tools, "m", tool_choice="any")
    assert body["tools"] is tools and body["model"] == "m" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "exactly one" in body["messages"][0]["content"]
    assert body["messages"][1]["content"] == "wake me at 7"
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in protocol.build_request("x", tools, "m")


# ---------------------------------------------------------------- parsing recorded responses


def test_parse_response_one_call():
    p = protocol.parse_response(_choice([_call("set_alarm")]), {"set_alarm", "make_call"})
    assert {k: p[k] for k in ("tools", "no_tool_call", "malformed", "n_calls")} == {
        "tools": ["set_alarm"], "no_tool_call": False, "malformed": False, "n_calls": 1}
    assert p["finish_reason"] == "tool_calls" and p["answer"] == "" and json.loads(p["tool_calls"]) == [_call("set_alarm")]
    assert p["prompt_tokens"] is None and p["completion_tokens"] is None  # the server reported no usage


def test_answer_meta_reads_usage_and_finish_reason():
    obj = {**_choice(content="Sure, I can help."), "usage": {"prompt_tokens": 31, "completion_tokens": 6,
                                                            "total_tokens": 37}}
    assert protocol.answer_meta(obj) == {"answer": "Sure, I can help.", "finish_reason": "stop", "prompt_tokens": 31,
                                         "completion_tokens": 6}
    obj["usage"] = {"prompt_tokens": "31"}  # not a count
    assert protocol.answer_meta(obj)["prompt_tokens"] is None


def test_tools_floor_is_a_lower_bound_on_the_tools_block(small_catalog):
    tools = protocol.openai_tools(small_catalog[:3], "en")
    assert protocol.tools_floor(tools) == -(-len(json.dumps(tools, ensure_ascii=False)) // 8)
    assert protocol.tools_floor([]) == 0
    assert protocol.tools_floor(tools[:1]) < protocol.tools_floor(tools)


def test_parse_response_no_call():
    p = protocol.parse_response(_choice(content="Sure, what time?"), {"set_alarm"})
    assert p["no_tool_call"] and not p["malformed"] and p["tools"] == [] and p["n_calls"] == 0


def test_parse_response_malformed_arguments():
    p = protocol.parse_response(_choice([_call("set_alarm", '{"x": "7am"')]), {"set_alarm"})
    assert p["malformed"] and p["tools"] == ["set_alarm"] and not p["no_tool_call"]
    assert protocol.parse_response(_choice([_call("set_alarm", '["x"]')]))["malformed"]  # not an object
    assert not protocol.parse_response(_choice([_call("set_alarm", "")]))["malformed"]  # empty = no arguments
    assert not protocol.parse_response(_choice([_call("set_alarm", {"x": 1})]))["malformed"]  # already decoded


def test_parse_response_unknown_tool_name():
    p = protocol.parse_response(_choice([_call("send_email")]), {"set_alarm", "make_call"})
    assert p["malformed"] and p["tools"] == ["send_email"]
    assert not protocol.parse_response(_choice([_call("send_email")]))["malformed"]  # no offered set given


def test_parse_response_several_calls():
    p = protocol.parse_response(_choice([_call("set_alarm"), _call("make_call", "{}")]), {"set_alarm", "make_call"})
    assert p["tools"] == ["set_alarm", "make_call"] and p["n_calls"] == 2 and not p["malformed"]


def test_parse_response_rejects_an_error_body():
    with pytest.raises(ValueError):
        protocol.parse_response({"object": "error", "message": "maximum context length is 4096 tokens"})


# ---------------------------------------------------------------- failure stages

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
    assert protocol.classify_failure(text) == stage
    assert stage in protocol.STAGES


def test_short_error_picks_the_deciding_line():
    s = protocol.short_error(AMBIGUOUS)
    assert s.startswith("transformers.integrations") and "AmbiguousGlobalPerLayerAttributeError" in s
    assert len(s) <= 300
    assert len(protocol.short_error(AMBIGUOUS, 100)) == 100 and protocol.short_error(AMBIGUOUS, 100).endswith("...")
    assert protocol.short_error(PARSER).startswith("KeyError: 'invalid tool call parser: granite_pythonic")
    assert protocol.short_error("a\nb\nValueError: boom\nexit") == "ValueError: boom"
