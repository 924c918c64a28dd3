"""One checkpoint end to end (the ``native_calls`` rule): jobs, serve, route, record.

Deployment failures are recorded, not raised, so the workflow completes on a
machine without vLLM or a GPU; bad config still raises InputError before anything starts.
:func:`deploy` (serve, run, record the outcome) also serves the tournament rule.
"""
from __future__ import annotations

import logging
import time

import pandas as pd

from .. import io
from ..config import Native, Run
from ..data.catalog import actions as catalog_actions
from ..errors import InputError
from ..retrieval.scores import Scores, load_scores, top_actions
from .client import RECORD_COLUMNS, run_requests, served_model
from .protocol import CONDITIONS, SHORTLIST_K, DeploymentError, build_request, openai_tools, short_error
from .server import environment, serving

log = logging.getLogger(__name__)

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


def build_jobs(catalog: list[dict], rows: list[dict], shortlist: dict, condition: str, model: str, lang_mode: str,
               chat_template_kwargs: dict | None = None, checkpoint: str = "") -> list[dict]:
    """One request per utterance: ``full`` offers every action (catalog order; a request's own candidates when it
    has them), ``top5`` the shortlist (rank order)."""
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
                     "lang": r["lang"], "request": build_request(r["text"], tools, model, chat_template_kwargs)})
    return jobs


def check_entry(name: str, entry: dict, endpoint: str) -> None:
    """A roster entry needs a model; a vLLM launch also needs its tool-call parser."""
    for key in ("model",) + (() if entry.get("command") or endpoint else ("parser",)):
        if not entry.get(key):
            raise InputError("config", "missing required field", field=f"native.roster.{name}.{key}")


def _write_records(path, records: list[dict]) -> None:
    df = pd.DataFrame(records, columns=RECORD_COLUMNS)
    io.write_atomic(path, df.to_csv(index=False, float_format="%.3f", lineterminator="\n"))


def deploy(entry: dict, native: Native, server_log, work, **fields) -> tuple[dict, list[dict]]:
    """Serve ``entry`` (or use ``native.endpoint``), run ``work(base_url, served_model)`` -> records, stop the server.

    Returns (deployment record, records). The deployment record starts with the entry's identity and ``fields``;
    when the server does not come up it holds deployed false, the stage, the captured error text and the
    environment, and there are no records. Only deployment failures are caught; the caller checks the entry
    (:func:`check_entry`) before it builds its requests.
    """
    name = entry.get("name") or entry.get("model", "")
    dep = {"checkpoint": name, "model": entry["model"], "revision": entry.get("revision") or "",
           "parser": entry.get("parser") or "", "endpoint": native.endpoint, **fields, "deployed": False, "stage": "",
           "error": "", "environment": environment()}
    records: list[dict] = []
    try:
        with serving(entry, server_log, native.readiness_timeout_s, native.endpoint) as server:
            dep.update(deployed=True, stage="ok", ready_s=round(server.ready_s, 2), command=server.command,
                       served_model=served_model(server.base_url, entry["model"]))
            records = work(server.base_url, dep["served_model"])
            dep["server_alive_after_run"] = server.alive()
    except DeploymentError as exc:
        log.warning("%s not deployed (%s): %s", name, exc.stage, short_error(exc.text))
        dep.update(deployed=False, stage=exc.stage, error=exc.text, records_discarded=len(records))
        records = []
    dep["n_records"] = len(records)
    dep["n_errors"] = sum(bool(r["error"]) for r in records)
    return dep, records


def run_checkpoint(catalog: list[dict], rows: list[dict], shortlist: dict, entry: dict, outputs,
                   native: Native) -> dict:
    """Serve one checkpoint, route every utterance under each condition, stop the server (:func:`deploy`).

    ``outputs``: (records CSV, deployment JSON, server log). Returns the
    deployment record (also written to the deployment JSON); a checkpoint that
    did not come up leaves an empty records file.
    """
    out_records_csv, out_deployment_json, server_log = outputs
    name = entry.get("name") or entry.get("model", "")
    check_entry(name, entry, native.endpoint)
    conditions = list(native.conditions)
    ctk = entry.get("chat_template_kwargs") or None
    jobs = {c: build_jobs(catalog, rows, shortlist, c, entry["model"], native.tool_language, ctk, name)
            for c in conditions}

    def work(base_url: str, model: str) -> list[dict]:
        records = []
        for cond in conditions:
            for j in jobs[cond]:
                j["request"]["model"] = model
            t0 = time.perf_counter()
            recs = run_requests(base_url, jobs[cond], native.concurrency, native.request_timeout_s)
            log.info("%s/%s: %d requests in %.1f s, %d errors", name, cond, len(recs), time.perf_counter() - t0,
                     sum(bool(r["error"]) for r in recs))
            records += recs
        return records

    dep, records = deploy(entry, native, server_log, work, conditions=conditions)
    _write_records(out_records_csv, records)
    io.write_json(out_deployment_json, dep)
    return dep


def write_native_calls(catalog_path, utterances_path, lexical_path, checkpoint: str, entry: dict, outputs,
                       run: Run, native: Native) -> dict:
    """The ``native_calls`` rule: one roster checkpoint with the lexical top-5 shortlist; ``outputs`` as in
    :func:`run_checkpoint`."""
    catalog, rows = io.load_inputs(catalog_path, utterances_path, run.langs)
    rows = io.main_set(rows)  # the mismatch_hard slice stays out of this study
    shortlist = shortlists(rows, load_scores(lexical_path))
    return run_checkpoint(catalog, rows, shortlist, {**entry, "name": checkpoint}, outputs, native)
