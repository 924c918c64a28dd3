"""One checkpoint end to end (the ``native_calls`` rule): jobs, serve, route, record.

Deployment failures are recorded, not raised, so the workflow completes on a
machine without vLLM, llama.cpp or a GPU; bad config still raises InputError before anything starts.
:func:`deploy` (serve, run, record the outcome) also serves the tournament rule.
"""
from __future__ import annotations

import json
import logging
import time
from types import SimpleNamespace

import pandas as pd

from ..config import Native
from ..core import io
from ..core.catalog import actions as catalog_actions
from ..core.errors import InputError
from ..core.scores import Scores, load_scores, top_actions
from ..experiment import Experiment
from .backends import environment, server_label
from .client import RECORD_COLUMNS, ServerError, post_chat, run_requests, served_model
from .protocol import (
    CONDITIONS,
    SHORTLIST_K,
    DeploymentError,
    build_request,
    is_context_error,
    openai_tools,
    short_error,
)
from .server import serving

log = logging.getLogger(__name__)
console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log

LANG_MODES = ("utterance", "both")


def shortlists(rows: list[dict], lexical: Scores, k: int = SHORTLIST_K) -> dict[str, list[str]]:
    """The lexical top-k actions per utterance (ties keep catalog order, as in :mod:`toolgate.retrieval.rerank`); a request
    with its own candidates gets at most those."""
    known = set(lexical.utterance_ids)
    missing = [r["utterance_id"] for r in rows if r["utterance_id"] not in known]
    if missing:
        raise InputError("lexical scores", f"no scores for utterance '{missing[0]}' ({len(missing)} missing)")
    top = top_actions(lexical, rows, k)
    return {r["utterance_id"]: [str(i) for i in ids if not r.get("candidates") or i in r["candidates"]]
            for r, ids in zip(rows, top)}


def per_language(catalog: list[dict], lang_mode: str, describe):
    """``describe(actions, lang)`` once per language a request can need (``native.tool_language``: the request's
    own, or ``both``); returns row -> the description in that row's language."""
    if lang_mode not in LANG_MODES:
        raise InputError("config", f"unknown tool language '{lang_mode}' (known: {', '.join(LANG_MODES)})",
                         field="native.tool_language")
    acts = catalog_actions(catalog)
    by_lang = {lang: describe(acts, lang) for lang in (io.LANGS if lang_mode == "utterance" else ("both",))}
    return lambda row: by_lang[row["lang"] if lang_mode == "utterance" else "both"]


def build_jobs(catalog: list[dict], rows: list[dict], shortlist: dict, condition: str, entry: dict,
               lang_mode: str) -> list[dict]:
    """One request per utterance: ``full`` offers every action (catalog order; a request's own candidates when it
    has them), ``top5`` the shortlist (rank order). ``entry``: the roster entry whose ``model``,
    ``chat_template_kwargs`` and ``tool_choice`` each request carries, under its ``name`` (else its model)."""
    checkpoint = checkpoint_name(entry)
    ctk, tool_choice = entry.get("chat_template_kwargs") or None, entry.get("tool_choice") or "required"
    if condition not in CONDITIONS:
        raise InputError("config", f"unknown condition '{condition}' (known: {', '.join(CONDITIONS)})", field="native.conditions")
    tools_for = per_language(catalog, lang_mode, openai_tools)
    jobs = []
    for r in rows:
        tools = tools_for(r)
        by_id = {t["function"]["name"]: t for t in tools}
        if r.get("candidates"):
            tools = [by_id[i] for i in r["candidates"]]
        if condition == "top5":
            unknown = [i for i in shortlist.get(r["utterance_id"], []) if i not in by_id]
            if r["utterance_id"] not in shortlist or unknown:
                raise InputError("shortlist", f"no usable shortlist for '{r['utterance_id']}'")
            tools = [by_id[i] for i in shortlist[r["utterance_id"]]]
        jobs.append({"checkpoint": checkpoint, "condition": condition, "utterance_id": r["utterance_id"],
                     "lang": r["lang"], "request": build_request(r["text"], tools, entry["model"], ctk,
                                                              tool_choice=tool_choice)})
    return jobs


def checkpoint_name(entry: dict) -> str:
    """What a roster entry's records and deployment record are named: its ``name``, else its model."""
    return entry.get("name") or entry.get("model", "")


def check_entry(name: str, entry: dict, native: Native) -> None:
    """A roster entry needs a model; a vLLM launch also needs its tool-call parser (llama.cpp, an endpoint or the
    entry's own command do not)."""
    launch_vllm = native.server == "vllm" and not (entry.get("command") or native.endpoint)
    for key in ("model",) + (("parser",) if launch_vllm else ()):
        if not entry.get(key):
            raise InputError("config", "missing required field", field=f"native.roster.{name}.{key}")


def negotiate_tool_choice(base_url: str, job: dict, entry: dict, timeout_s: float) -> tuple[str, str]:
    """(tool_choice to send, why it differs from the entry's, or "").

    ``job`` goes once with the entry's ``tool_choice``; when the server answers
    with an HTTP error and the same request with ``auto`` is answered, the server
    rejected the value (llama.cpp's chatml-function-calling takes only ``auto``).
    That is a deployment outcome (``tool_choice_rejected``) unless the entry sets
    ``tool_choice_fallback``: then ``auto`` is used and the reason kept. Any
    other failure says nothing about tool_choice; the run records it.
    """
    wanted = entry.get("tool_choice") or "required"
    if wanted == "auto":
        return wanted, ""
    try:
        post_chat(base_url, job["request"], timeout_s)
        return wanted, ""
    except ServerError as exc:
        first = exc
    except RuntimeError:
        return wanted, ""
    if is_context_error(str(first)):
        return wanted, ""
    try:
        post_chat(base_url, {**job["request"], "tool_choice": "auto"}, timeout_s)
    except RuntimeError:
        return wanted, ""
    text = (f"the server rejected tool_choice='{wanted}': {first} (the same request with tool_choice='auto' was "
            f"answered)\nbody: {first.body}")
    if not entry.get("tool_choice_fallback"):
        raise DeploymentError("tool_choice_rejected", f"{text}\nset tool_choice_fallback: true in the roster entry "
                                                      "to run with tool_choice='auto'")
    log.warning("%s; running with tool_choice='auto' (tool_choice_fallback)", text.splitlines()[0])
    return "auto", text


def all_failed(records: list[dict]) -> str:
    """The ``all_requests_failed`` text when every record is a failed request, else ""."""
    if not records or not all(r["error"] for r in records):
        return ""
    first = records[0]
    return f"all {len(records)} requests failed; the first: {first['error']}" + (
        f"\nbody: {first['error_body']}" if first.get("error_body") else "")


def dropped_tools(records: list[dict]) -> str:
    """The ``tools_dropped`` text when the server's template left the tools out of every answered prompt, else ""."""
    answered = [r for r in records if not r["error"]]
    if not answered or not all(r["tools_dropped"] for r in answered):
        return ""
    r = answered[0]
    return (f"the server's template dropped the tools: all {len(answered)} answers came from prompts shorter than "
            f"their tools block (e.g. {r['prompt_tokens']} prompt tokens where the tools alone need at least "
            f"{r['tools_floor']}); they are not counted as declines")


def _write_records(path, records: list[dict]) -> None:
    df = pd.DataFrame(records, columns=RECORD_COLUMNS)
    io.write_atomic(path, df.to_csv(index=False, float_format="%.3f", lineterminator="\n"))


def deploy(entry: dict, native: Native, server_log, work, **fields) -> tuple[dict, list[dict]]:
    """Serve ``entry`` on ``native.server`` (or use ``native.endpoint``), run ``work(base_url, served_model, dep)`` ->
    records (it may add to the deployment record ``dep``, or raise DeploymentError), stop the server.

    Returns (deployment record, records). The deployment record starts with the entry's identity, the server that
    answered and ``fields``; when the server does not come up it holds deployed false, the stage, the captured
    error text and the environment, and there are no records; when every request failed the stage is
    ``all_requests_failed``. Only deployment failures are caught; the caller checks the entry
    (:func:`check_entry`) before it builds its requests.
    """
    name = checkpoint_name(entry)
    dep = {"checkpoint": name, "model": entry["model"], "revision": entry.get("revision") or "",
           "parser": entry.get("parser") or "", "endpoint": native.endpoint,
           "server": f"endpoint {native.endpoint}" if native.endpoint else server_label(native.server, entry),
           "protocol_check": bool(entry.get("protocol_check")), **fields, "deployed": False, "stage": "",
           "error": "", "environment": environment()}
    records: list[dict] = []
    console.info("%s: starting %s", name, dep["server"])
    try:
        with serving(entry, server_log, native.readiness_timeout_s, native.endpoint, server=native.server) as server:
            console.info("%s: server ready after %.1f s", name, server.ready_s)
            model, owner = served_model(server.base_url, entry["model"])
            dep.update(deployed=True, stage="ok", ready_s=round(server.ready_s, 2), command=server.command,
                       served_model=model, models_owned_by=owner)
            if not server.launched and owner:
                dep["server"] += f" (its models are owned_by '{owner}')"
            records = work(server.base_url, model, dep)
            dep["server_alive_after_run"] = server.alive()
    except DeploymentError as exc:
        log.warning("%s not deployed (%s): %s", name, exc.stage, short_error(exc.text))
        dep.update(deployed=False, stage=exc.stage, error=exc.text, records_discarded=len(records))
        records = []
    dep["n_records"] = len(records)
    dep["n_errors"] = sum(bool(r["error"]) for r in records)
    failed = all_failed(records)
    if failed:
        dep.update(stage="all_requests_failed", error=failed)
    return dep, records


def run_checkpoint(catalog: list[dict], rows: list[dict], shortlist: dict, entry: dict, outputs,
                   native: Native) -> dict:
    """Serve one checkpoint, route every utterance under each condition, stop the server (:func:`deploy`).

    ``outputs``: named ``records`` (CSV), ``deployment`` (JSON) and ``server_log``. Returns the
    deployment record (also written to the deployment JSON); a checkpoint that
    did not come up leaves an empty records file.
    """
    name = checkpoint_name(entry)
    check_entry(name, entry, native)
    conditions = list(native.conditions)
    jobs = {c: build_jobs(catalog, rows, shortlist, c, entry, native.tool_language) for c in conditions}

    def work(base_url: str, model: str, dep: dict) -> list[dict]:
        every = [j for c in conditions for j in jobs[c]]
        for j in every:
            j["request"]["model"] = model
        wanted = entry.get("tool_choice") or "required"
        probe = min(every, key=lambda j: len(json.dumps(j["request"])), default=None)  # the shortest request
        used, why = negotiate_tool_choice(base_url, probe, entry, native.request_timeout_s) if probe else (wanted, "")
        dep.update(tool_choice=wanted, tool_choice_used=used, tool_choice_note=why)
        records = []
        for cond in conditions:
            for j in jobs[cond]:
                j["request"]["tool_choice"] = used
            t0 = time.perf_counter()
            console.info("%s/%s: %d requests", name, cond, len(jobs[cond]))
            recs = run_requests(base_url, jobs[cond], native.concurrency, native.request_timeout_s)
            console.info("%s/%s: %d requests in %.1f s, %d errors", name, cond, len(recs), time.perf_counter() - t0,
                         sum(bool(r["error"]) for r in recs))
            records += recs
        return records

    dep, records = deploy(entry, native, outputs.server_log, work, conditions=conditions)
    dropped = dep["stage"] == "ok" and dropped_tools(records)
    if dropped:
        dep.update(stage="tools_dropped", error=dropped)
    _write_records(outputs.records, records)
    io.write_json(outputs.deployment, dep)
    return dep


def write_native_calls(exp: Experiment, checkpoint: str, server_log) -> dict:
    """The ``native_calls`` rule: one roster checkpoint (the rule's wildcard; its roster ``entry`` a param) with the
    lexical top-5 shortlist (input ``lexical``); outputs ``records`` and ``deployment``, the server's own log
    ``server_log`` (as in :func:`run_checkpoint`)."""
    rows = exp.main  # the mismatch_hard slice stays out of this study
    shortlist = shortlists(rows, load_scores(exp.input.lexical))
    outputs = SimpleNamespace(records=exp.output.records, deployment=exp.output.deployment, server_log=server_log)
    return run_checkpoint(exp.catalog, rows, shortlist, {**exp.entry, "name": checkpoint}, outputs, exp.native)
