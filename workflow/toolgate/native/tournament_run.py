"""The ``tournament`` rule: one roster checkpoint ranks every in-catalog request by tournament (:mod:`.tournament`).

The server is served and stopped as in the native stage (:func:`.run.deploy`:
endpoint mode, a launched ``native.server`` or an entry's own ``command``); requests go
through the native client, ``native.concurrency`` brackets in flight. A
checkpoint that does not come up is recorded as not run, with the reason, so
the workflow completes on a machine without a model.
"""
from __future__ import annotations

import logging
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ..config import Native, Tournament
from ..core import io
from ..core.scores import mode_note
from ..metrics import rank_metrics
from ..retrieval.selection import by_lang_slice
from ..tables import write_table
from ..utterances import in_catalog
from .client import failure, post_chat, run_requests
from .protocol import PROTOCOL_CHECK, answer_meta, chat_body, short_error
from .run import check_entry, checkpoint_name, deploy, per_language
from .tournament import option_texts, rank_request

log = logging.getLogger(__name__)

ANSWER_MAX_TOKENS = 8  # a letter; the cap only bounds a rambling answer
TABLE_COLUMNS = ["checkpoint", "server", "status", "reason", "label", "lang", "slice", "n", "n_errors", "top1", "top5",
                 "mrr", "ndcg_at_10", "recall_at_5", "prompts", "invalid_rate", "prompt_tokens", "completion_tokens",
                 "latency_s"]


def build_jobs(catalog: list[dict], rows: list[dict], lang_mode: str, tournament: Tournament) -> list[dict]:
    """One bracket per in-catalog request: its options (the whole catalog's actions, or its own candidates), in
    catalog order and its language (or both, ``native.tool_language``)."""
    options_for = per_language(catalog, lang_mode, option_texts)
    jobs = []
    for r in in_catalog(rows):
        options, keep = options_for(r), set(r.get("candidates") or ())
        if keep:
            options = {i: o for i, o in options.items() if i in keep}
        jobs.append({"utterance_id": r["utterance_id"], "lang": r["lang"], "text": r["text"], "options": options,
                     "group_size": tournament.group_size, "max_chars": tournament.max_prompt_chars})
    return jobs


def call_bracket(base_url: str, job: dict, timeout_s: float) -> dict:
    """One request's tournament through the server: a record. Failures are recorded (``error``, ``error_body``),
    never raised.

    Tokens are the sums of the answers' ``usage``; None when a server does not report it. ``answers`` and
    ``finish_reasons`` hold each prompt's raw answer text and finish reason, in the order sent.
    """
    used = {"prompts": 0, "prompt_tokens": 0, "completion_tokens": 0, "answers": [], "finish_reasons": []}

    def answer(system: str, user: str) -> str:
        obj = post_chat(base_url, chat_body(system, user, job["model"], job.get("chat_template_kwargs"),
                                            ANSWER_MAX_TOKENS), timeout_s)
        meta = answer_meta(obj)  # ValueError for anything but a chat completion
        used["prompts"] += 1
        used["answers"].append(meta["answer"])
        used["finish_reasons"].append(meta["finish_reason"])
        for key in ("prompt_tokens", "completion_tokens"):
            ok = meta[key] is not None and used[key] is not None
            used[key] = used[key] + meta[key] if ok else None
        return meta["answer"]

    rec = {"utterance_id": job["utterance_id"], "lang": job["lang"], "n_candidates": len(job["options"]),
           "top5": [], "ranking": [], "rounds": 0, "prompts_by_round": [], "invalid": 0, "error": "", "error_body": ""}
    t0 = time.perf_counter()
    try:
        bracket = rank_request(job["utterance_id"], job["text"], job["options"], answer, job["group_size"],
                               job["max_chars"])
    except (RuntimeError, ValueError) as exc:  # PromptTooLong is a ValueError; so is a body without choices
        rec.update(failure(exc), error=str(exc))
    else:
        rec.update(top5=bracket.ranking[:5], ranking=bracket.ranking, rounds=len(bracket.prompts_by_round),
                   prompts_by_round=bracket.prompts_by_round, invalid=bracket.invalid)
    rec.update(used, latency_s=round(time.perf_counter() - t0, 4))
    return rec


def run_tournament(catalog: list[dict], rows: list[dict], entry: dict, outputs, native: Native,
                   tournament: Tournament) -> tuple[dict, list[dict]]:
    """Serve the checkpoint, run every bracket, stop the server. ``outputs``: named ``records`` (JSONL),
    ``deployment`` (JSON) and ``server_log``. Returns (deployment record, records); a checkpoint that did not come
    up leaves no records."""
    name = checkpoint_name(entry)
    check_entry(name, entry, native)
    jobs = build_jobs(catalog, rows, native.tool_language, tournament)

    def work(base_url: str, model: str, dep: dict) -> list[dict]:
        for j in jobs:
            j.update(model=model, chat_template_kwargs=entry.get("chat_template_kwargs") or None)
        t0 = time.perf_counter()
        recs = run_requests(base_url, jobs, native.concurrency, native.request_timeout_s, call=call_bracket)
        log.info("%s: %d brackets in %.1f s, %d errors", name, len(recs), time.perf_counter() - t0,
                 sum(bool(r["error"]) for r in recs))
        return recs

    dep, records = deploy(entry, native, outputs.server_log, work, group_size=tournament.group_size,
                          max_prompt_chars=tournament.max_prompt_chars)
    io.write_atomic(outputs.records, io.dumps_jsonl(records))
    io.write_json(outputs.deployment, dep)
    return dep, records


def tournament_frame(dep: dict, records: list[dict], rows: list[dict]) -> pd.DataFrame:
    """Top-1, top-5, MRR, nDCG@10 and recall@5 (gold's place in the ranking; a failed request or a gold outside the
    ranking counts as wrong) with mean prompts, invalid-answer rate, tokens and latency per request, by language and
    slice.

    One "not run" row with the reason when the checkpoint did not come up. Rows say "all requests failed" when
    every request did, and then, or for a ``protocol_check`` entry, the rank metrics are not computed (the
    reason says why; ``label`` marks a protocol check)."""
    base = {"checkpoint": dep.get("checkpoint", ""), "server": dep.get("server", "")}
    if not dep.get("deployed"):
        reason = f"{dep.get('stage', '')}: {short_error(dep.get('error', ''))}"
        return pd.DataFrame([{**base, "status": "not run", "reason": reason}], columns=TABLE_COLUMNS)
    if not records:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    meta = {r["utterance_id"]: r for r in rows}
    df = pd.DataFrame(records)
    gold = df["utterance_id"].map(lambda u: meta[u]["gold_tool"])
    df["slice"] = df["utterance_id"].map(lambda u: meta[u]["slice"])
    df["rank"] = [rk.index(g) + 1 if g in rk else np.inf for rk, g in zip(df["ranking"], gold)]
    failed = dep.get("stage") == "all_requests_failed"
    label = PROTOCOL_CHECK if dep.get("protocol_check") else ""
    reason = (f"not computable: all {len(df)} requests failed ({short_error(df['error'].iloc[0])})" if failed else
              "not computed: a protocol check's model (protocol_check), whose accuracy is not a result" if label else "")
    recs = []
    for lang, slice_, m in by_lang_slice(df):
        prompts = m.loc[m["error"].eq(""), "prompts"].sum()  # a failed bracket records no invalid count
        scores = rank_metrics(m["rank"].to_numpy())
        recs.append({**base, "status": "all requests failed" if failed else "ok", "reason": reason, "label": label,
                     "lang": lang, "slice": slice_, "n": len(m), "n_errors": int(m["error"].ne("").sum()),
                     **{k: float("nan") if reason else v for k, v in scores.items()},
                     "prompts": float(m["prompts"].mean()),
                     "invalid_rate": float(m["invalid"].sum() / prompts) if prompts else float("nan"),
                     "prompt_tokens": _mean(m["prompt_tokens"]), "completion_tokens": _mean(m["completion_tokens"]),
                     "latency_s": float(m["latency_s"].mean())})
    return pd.DataFrame(recs, columns=TABLE_COLUMNS)


def _mean(values: pd.Series) -> float:
    """Mean tokens per request; NaN when any answer went without a reported count."""
    return float("nan") if values.isna().any() else float(values.mean())


def write_tournament(exp, server_log):
    """The ``tournament`` rule on the experiment (``native``, ``tournament`` and ``run`` params; outputs ``records``,
    ``deployment`` and ``table``); ``server_log``: where the served model's output goes."""
    catalog, rows, run, native, tournament = exp.catalog, exp.rows, exp.run, exp.native, exp.tournament
    outputs = SimpleNamespace(records=exp.output.records, deployment=exp.output.deployment, server_log=server_log,
                              table=exp.output.table)
    entry = {**native.roster[tournament.checkpoint], "name": tournament.checkpoint}
    dep, records = run_tournament(catalog, rows, entry, outputs, native, tournament)
    df = tournament_frame(dep, records, rows)
    check = " Rank metrics not computed (protocol check)." if entry.get("protocol_check") else ""
    write_table(df, outputs.table, "Multiple-choice tournament ranker" + (f" ({PROTOCOL_CHECK})" if check else ""),
                f"{tournament.group_size} lettered options per prompt; group winners advance.{check} "
                f"docs/metrics.md, 'Multiple-choice tournament'. {mode_note(rows)}", run.seed)
    return df
