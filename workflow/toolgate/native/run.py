"""One checkpoint end to end (the ``native_calls`` rule): jobs, serve, route, record.

Deployment failures are recorded, not raised, so the workflow completes on a
machine without vLLM or a GPU; bad config still raises InputError before anything starts.
"""
from __future__ import annotations

import logging
import time

import pandas as pd

from .. import io
from ..catalog import actions as catalog_actions
from ..config import Native, Run
from ..errors import InputError
from ..scores import Scores, load_scores, top_actions
from .client import RECORD_COLUMNS, run_requests, served_model
from .protocol import CONDITIONS, SHORTLIST_K, DeploymentError, build_request, openai_tools, short_error
from .server import environment, serving

log = logging.getLogger(__name__)

LANG_MODES = ("utterance", "both")


def shortlists(rows: list[dict], lexical: Scores, k: int = SHORTLIST_K) -> dict[str, list[str]]:
    """The lexical top-k actions per utterance (ties keep catalog order, as in :mod:`toolgate.rerank`); a request
    with its own candidates gets at most those."""
    known = set(lexical.utterance_ids)
    missing = [r["utterance_id"] for r in rows if r["utterance_id"] not in known]
    if missing:
        raise InputError("lexical scores", f"no scores for utterance '{missing[0]}' ({len(missing)} missing)")
    top = top_actions(lexical, rows, k)
    return {r["utterance_id"]: [str(i) for i in ids if not r.get("candidates") or i in r["candidates"]]
            for r, ids in zip(rows, top)}


def build_jobs(catalog: list[dict], rows: list[dict], shortlist: dict, condition: str, model: str, lang_mode: str,
               chat_template_kwargs: dict | None = None, checkpoint: str = "") -> list[dict]:
    """One request per utterance: ``full`` offers every action (catalog order; a request's own candidates when it
    has them), ``top5`` the shortlist (rank order)."""
    if condition not in CONDITIONS:
        raise InputError("config", f"unknown condition '{condition}' (known: {', '.join(CONDITIONS)})", field="native.conditions")
    if lang_mode not in LANG_MODES:
        raise InputError("config", f"unknown tool language '{lang_mode}' (known: {', '.join(LANG_MODES)})",
                         field="native.tool_language")
    acts = catalog_actions(catalog)
    by_lang = {lang: openai_tools(acts, lang) for lang in (io.LANGS if lang_mode == "utterance" else ("both",))}
    jobs = []
    for r in rows:
        tools = by_lang[r["lang"] if lang_mode == "utterance" else "both"]
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


def _check_entry(name: str, entry: dict, endpoint: str) -> None:
    """A roster entry needs a model; a vLLM launch also needs its tool-call parser."""
    for key in ("model",) + (() if entry.get("command") or endpoint else ("parser",)):
        if not entry.get(key):
            raise InputError("config", "missing required field", field=f"native.roster.{name}.{key}")


def _write_records(path, records: list[dict]) -> None:
    df = pd.DataFrame(records, columns=RECORD_COLUMNS)
    io.write_atomic(path, df.to_csv(index=False, float_format="%.3f", lineterminator="\n"))


def run_checkpoint(catalog: list[dict], rows: list[dict], shortlist: dict, entry: dict, outputs,
                   native: Native) -> dict:
    """Serve one checkpoint, route every utterance under each condition, stop the server.

    ``outputs``: (records CSV, deployment JSON, server log). Returns the
    deployment record (also written to the deployment JSON): deployed false, the
    stage, the captured error text and the environment when the server did not
    come up, with an empty records file.
    """
    out_records_csv, out_deployment_json, server_log = outputs
    name = entry.get("name") or entry.get("model", "")
    _check_entry(name, entry, native.endpoint)
    conditions = list(native.conditions)
    model = entry["model"]
    ctk = entry.get("chat_template_kwargs") or None
    jobs = {c: build_jobs(catalog, rows, shortlist, c, model, native.tool_language, ctk, name) for c in conditions}
    dep = {"checkpoint": name, "model": model, "revision": entry.get("revision") or "", "parser": entry.get("parser") or "",
           "endpoint": native.endpoint, "conditions": conditions, "deployed": False, "stage": "", "error": "",
           "environment": environment()}
    records: list[dict] = []
    try:
        with serving(entry, server_log, native.readiness_timeout_s, native.endpoint) as server:
            dep.update(deployed=True, stage="ok", ready_s=round(server.ready_s, 2), command=server.command,
                       served_model=served_model(server.base_url, model))
            for cond in conditions:
                for j in jobs[cond]:
                    j["request"]["model"] = dep["served_model"]
                t0 = time.perf_counter()
                recs = run_requests(server.base_url, jobs[cond], native.concurrency, native.request_timeout_s)
                log.info("%s/%s: %d requests in %.1f s, %d errors", name, cond, len(recs), time.perf_counter() - t0,
                         sum(bool(r["error"]) for r in recs))
                records += recs
            dep["server_alive_after_run"] = server.alive()
    except DeploymentError as exc:
        log.warning("%s not deployed (%s): %s", name, exc.stage, short_error(exc.text))
        dep.update(deployed=False, stage=exc.stage, error=exc.text, records_discarded=len(records))
        records = []
    dep["n_records"] = len(records)
    dep["n_errors"] = sum(bool(r["error"]) for r in records)
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
