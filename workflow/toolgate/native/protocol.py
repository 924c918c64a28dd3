"""What goes over the wire and what comes back: catalog rows as OpenAI tools, the
chat-completions request, the parsed answer, and the stage a failed deployment
reached (read from the launcher's or the server's captured text, or found by the protocol)."""
from __future__ import annotations

import json
import math
import re

from ..core import io
from ..core.errors import InputError

CONDITIONS = ("full", "top5")
SHORTLIST_K = 5  # the shortlist size of condition "top5"
TOOL_LANGS = ("ko", "en", "both")
MAX_TOKENS = 512  # a tool call needs far fewer; the cap only bounds a rambling answer
TOOL_CHOICES = ("required", "auto")
PROTOCOL_CHECK = "protocol check, not an accuracy result"  # the label of a roster entry with protocol_check
# No tokenizer packs more than this many characters of tools JSON into one token on average (English JSON runs
# at 3 to 4, Korean at 1 to 2): a prompt with fewer tokens than the tools block's characters / 8 cannot hold it.
MAX_CHARS_PER_TOKEN = 8
SYSTEM_PROMPT = ("You route requests on a device. Call exactly one of the provided tools: "
                 "the one that best fits the user's request.")

# Failure stages, most specific first: the first stage with a pattern found
# anywhere in the captured text wins, so a root cause printed early in a log
# (e.g. CUDA out of memory) beats the generic exit line that follows it.
FAILURE_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("llama_cpp_not_installed", (
        r"No module named '?(llama_cpp|uvicorn|fastapi|sse_starlette|starlette_context|pydantic_settings)\b",
        r"llama-server binary '.*' not found",
    )),
    ("vllm_not_importable", (
        r"No module named '?vllm",                  # ModuleNotFoundError: vLLM not installed in this interpreter
        r"cannot import name '?\w+'? from '?vllm",  # a partial or mismatched install
        r"vllm/_C\.abi3\.so|vllm\._C\b",            # compiled extension built for another torch/CUDA
    )),
    ("no_cuda_device", (
        r"No CUDA GPUs are available",              # torch: RuntimeError when CUDA_VISIBLE_DEVICES hides all
        r"no CUDA-capable device is detected",      # CUDA runtime error 100
        r"Found no NVIDIA driver on your system",   # torch without a driver
        r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
        r"Failed to infer device type",             # vLLM finds no platform (CPU-only machine)
        r"CUDA driver initialization failed",
        r"no CUDA device",                          # our own pre-flight message
    )),
    ("out_of_memory", (
        r"CUDA out of memory",                      # torch.OutOfMemoryError text
        r"OutOfMemoryError",
        r"CUDA error: out of memory",
        r"No available memory for the cache blocks",  # vLLM: weights fit, KV cache does not
        r"larger than the maximum number of tokens that can be stored in KV cache",
        r"KV cache is needed, which is larger than the available KV cache memory",
    )),
    ("parser_unavailable", (
        r"invalid tool call parser",                # vLLM: KeyError('invalid tool call parser: x (chose from {...})')
        r"--tool-call-parser: invalid choice",      # older vLLM: argparse choices
        r"unrecognized arguments:.*--(enable-auto-tool-choice|tool-call-parser)",  # vLLM without tool calling
    )),
    ("weights_unavailable", (                       # the weights could not be fetched (offline, gated, typo)
        r"GatedRepoError", r"RepositoryNotFoundError", r"RevisionNotFoundError", r"LocalEntryNotFoundError",
        r"couldn't connect to '?https://huggingface\.co", r"OfflineModeIsEnabled",
        r"does not appear to have a file named",
        r"Model path does not exist",               # llama.cpp: no GGUF file there
    )),
    ("weights_not_admitted", (                      # vLLM (or transformers under it) refuses the checkpoint
        r"AmbiguousGlobalPerLayerAttributeError",   # transformers >= 5.15 per-layer configs (Gemma 4) in older vLLM
        r"Model architectures? \[.*\] (are|is) not supported",
        r"are not supported for now",
        r"does not recognize this architecture",    # transformers too old for the checkpoint's model_type
        r"Unrecognized model in",
        r"Unknown quantization method",
        r"is not supported for the current GPU",    # quantization kernels need a newer compute capability
        r"Bfloat16 is only supported on GPUs with compute capability",
        r"Failed to load model from file", r"error loading model",  # llama.cpp refuses the GGUF file
    )),
    ("readiness_timeout", (r"not ready after \d+", r"readiness timeout")),
    ("server_exited", (r"exited with code", r"exited before it was ready")),
)
# Stages the protocol finds on a server that came up: it rejected the configured tool_choice (and the entry
# allows no fallback), its chat template dropped the tools from every prompt, or every request failed.
PROTOCOL_STAGES = ("tool_choice_rejected", "tools_dropped", "all_requests_failed")
STAGES = tuple(s for s, _ in FAILURE_PATTERNS) + PROTOCOL_STAGES + ("unknown",)
CONTEXT_ERROR = re.compile(
    r"maximum context length"           # vLLM and OpenAI: "This model's maximum context length is N tokens"
    r"|context_length_exceeded"          # OpenAI's error code
    r"|exceeds? the available context size|exceed_context_size",  # llama.cpp server
    re.IGNORECASE)


class DeploymentError(RuntimeError):
    """A checkpoint did not come up; ``stage`` is one of :data:`STAGES`, ``text`` the captured evidence."""

    def __init__(self, stage: str, text: str):
        self.stage, self.text = stage, text
        super().__init__(f"{stage}: {short_error(text)}")


# ---------------------------------------------------------------- catalog -> OpenAI tools


def _text(value, lang: str) -> str:
    """A ``{lang: text}`` map (or a plain string) in ``lang``; ``both`` joins "ko / en".

    A missing language falls back to the other one, so catalogs imported in one
    language (``catalog.import_openai_tool``) still give every tool a description.
    """
    if isinstance(value, str):
        return value
    if lang == "both":
        return " / ".join(dict.fromkeys(t for t in (value.get(l, "") for l in io.LANGS) if t))
    return value.get(lang) or next((value[l] for l in io.LANGS if value.get(l)), "")


def _parameters(schema: dict, lang: str) -> dict:
    """The tool's JSON Schema with every ``{lang: text}`` description made a string."""
    props = {}
    for name, spec in schema.get("properties", {}).items():
        spec = dict(spec)
        if "description" in spec:
            spec["description"] = _text(spec["description"], lang)
        props[name] = spec
    return {"type": "object", "properties": props, "required": list(schema.get("required", []))}


def openai_tools(actions: list[dict], lang: str) -> list[dict]:
    """OpenAI ``tools`` entries for catalog rows, in their order; the function name is the catalog id."""
    if lang not in TOOL_LANGS:
        raise InputError("native", f"unknown tool language '{lang}' (known: {', '.join(TOOL_LANGS)})")
    return [{"type": "function",
             "function": {"name": t["id"],
                          "description": f"{_text(t['names'], lang)}: {_text(t['descriptions'], lang)}",
                          "parameters": _parameters(t["parameters"], lang)}} for t in actions]


def chat_body(system: str, user: str, model: str, chat_template_kwargs: dict | None, max_tokens: int) -> dict:
    """A chat-completions body: one system prompt, one user message.

    Temperature 0 makes every decision greedy and repeatable. Chat-template
    options (e.g. ``enable_thinking: false``) ride along in the body, which vLLM
    and llama.cpp server both read, so they also apply in endpoint mode.
    """
    body = {"model": model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0, "max_tokens": max_tokens}
    if chat_template_kwargs:
        body["chat_template_kwargs"] = dict(chat_template_kwargs)
    return body


def build_request(text: str, tools: list[dict], model: str, chat_template_kwargs: dict | None = None,
                  max_tokens: int = MAX_TOKENS, tool_choice: str = "required") -> dict:
    """One tool-calling body (:func:`chat_body`): system prompt, the utterance, the tools, ``tool_choice``
    (``required``: a call is demanded; ``auto``: the model may answer in text)."""
    if tool_choice not in TOOL_CHOICES:
        raise InputError("native", f"unknown tool_choice '{tool_choice}' (known: {', '.join(TOOL_CHOICES)})")
    return {**chat_body(SYSTEM_PROMPT, text, model, chat_template_kwargs, max_tokens), "tools": tools,
            "tool_choice": tool_choice}


def tools_floor(tools: list[dict]) -> int:
    """The fewest prompt tokens that can hold ``tools`` (:data:`MAX_CHARS_PER_TOKEN`); 0 for no tools."""
    return math.ceil(len(json.dumps(tools, ensure_ascii=False)) / MAX_CHARS_PER_TOKEN) if tools else 0


# ---------------------------------------------------------------- responses


def parse_response(obj: dict, offered=None) -> dict:
    """Called tool names, and whether the answer had no call or a malformed one, with what audits it.

    ``malformed``: a call's arguments are not a JSON object, or its name is not
    among ``offered`` (when given). An empty argument string counts as ``{}``:
    some servers send it for a call without parameters. Raises ValueError for a
    body that is not a chat completion (no ``choices``). Also: the answer's text,
    its tool calls as sent (JSON), ``finish_reason`` and the ``usage`` tokens (:func:`answer_meta`).
    """
    message = _message(obj)
    calls = message.get("tool_calls") or []
    offered = None if offered is None else set(offered)
    names, malformed = [], False
    for call in calls:
        fn = (call or {}).get("function") or {}
        name = fn.get("name")
        names.append(name if isinstance(name, str) else "")
        if not isinstance(name, str) or (offered is not None and name not in offered):
            malformed = True
        if not _arguments_ok(fn.get("arguments")):
            malformed = True
    return {"tools": names, "no_tool_call": not calls, "malformed": malformed, "n_calls": len(calls),
            "tool_calls": json.dumps(calls, ensure_ascii=False) if calls else "", **answer_meta(obj)}


def answer_meta(obj: dict) -> dict:
    """A chat completion's first answer for the record: ``answer`` (its text, "" for none), ``finish_reason`` and
    ``prompt_tokens``/``completion_tokens`` from ``usage`` (None when the server reports none); ValueError as in
    :func:`parse_response`."""
    message = _message(obj)
    usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else {}
    content = message.get("content")
    return {"answer": content if isinstance(content, str) else "",
            "finish_reason": str(obj["choices"][0].get("finish_reason") or ""),
            **{k: usage[k] if isinstance(usage.get(k), int) else None for k in ("prompt_tokens", "completion_tokens")}}


def is_context_error(message: str) -> bool:
    """Does a server's error message say the prompt does not fit its context (vLLM, llama.cpp, OpenAI)?"""
    return bool(CONTEXT_ERROR.search(message or ""))


def _message(obj: dict) -> dict:
    choices = obj.get("choices") if isinstance(obj, dict) else None
    if not choices:
        raise ValueError(f"not a chat completion: {json.dumps(obj)[:200]}")
    return choices[0].get("message") or {}


def _arguments_ok(args) -> bool:
    if isinstance(args, dict) or args is None:
        return True
    if not isinstance(args, str):
        return False
    if not args.strip():
        return True
    try:
        return isinstance(json.loads(args), dict)
    except json.JSONDecodeError:
        return False


# ---------------------------------------------------------------- failure stages


def _find(text: str) -> tuple[str, str]:
    """(stage, the last line that shows it); ("unknown", "") when nothing matches."""
    lines = text.splitlines()
    for stage, patterns in FAILURE_PATTERNS:
        rx = re.compile("|".join(f"(?:{p})" for p in patterns))
        hits = [l for l in lines if rx.search(l)]
        if hits:
            return stage, hits[-1]
    return "unknown", ""


def classify_failure(text: str) -> str:
    """The failure stage for captured launcher or server error text (see :data:`FAILURE_PATTERNS`)."""
    return _find(text or "")[0]


def short_error(text: str, n: int = 300) -> str:
    """The most telling line of an error text, at most ``n`` characters.

    The line that decided the stage when there is one, else the last line that
    names an error, else the last line; vLLM's ``(APIServer pid=..)`` prefix is dropped.
    """
    text = text or ""
    _, line = _find(text)
    if not line:
        lines = [l for l in text.splitlines() if l.strip()]
        errs = [l for l in lines if re.search(r"Error|Exception|error:", l)]
        line = (errs or lines or [""])[-1]
    line = re.sub(r"^\s*\(\w+ pid=\d+\)\s*", "", line).strip()
    return line if len(line) <= n else line[: n - 3] + "..."
