"""The ``native_tables`` rule: deployment outcomes (paper Table 7) and native-caller accuracy, with the share of the
lexical top-1/top-5 gap the native caller closes (docs/metrics.md, 'Native tool calling').
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.scores import Scores, load_scores, top_actions
from ..experiment import Experiment
from ..tables import write_table
from ..utterances import in_catalog
from .protocol import CONDITIONS, PROTOCOL_CHECK, PROTOCOL_STAGES, SHORTLIST_K, short_error

# reported.yaml key prefixes of the paper values each table reproduces
DEPLOYMENT_PAPER = ("native.roster_size", "native.checkpoints_deployed", "intro.native_checkpoints_not_deployed")
CALLS_PAPER = ("native.rows_per_condition", "native.lfm25.no_tool_call", "rerank.recovered_share.native")
CALL_COLUMNS = ["checkpoint", "model", "server", "condition", "tool_choice", "label", "n", "n_in_catalog", "n_errors",
                "n_tools_dropped", "accuracy", "no_tool_call_rate", "malformed_rate", "median_latency_ms",
                "median_prompt_tokens", "median_completion_tokens", "bm25_top1", "bm25_top5", "recovered_share",
                "not_computable"]
DEPLOYMENT_COLUMNS = ["checkpoint", "model", "server", "parser", "tool_choice", "deployed", "stage", "error", "vllm",
                      "llama_cpp_python", "gpu", "gpu_memory", "driver"]
_FLAGS = ("no_tool_call", "malformed", "tools_dropped")
_TEXT = ("chosen", "error", "error_body", "utterance_id", "answer", "tool_calls", "finish_reason", "tool_choice")


def read_records(path) -> pd.DataFrame:
    """A records CSV with empty strings kept as such (not NaN) and empty token counts as NaN."""
    df = pd.read_csv(path, dtype={c: str for c in _TEXT}, keep_default_na=False)
    for col in _FLAGS:
        df[col] = df[col].astype(str).str.lower().eq("true")
    for col in ("prompt_tokens", "completion_tokens"):
        df[col] = pd.to_numeric(df[col], errors="coerce")
    return df


def _error_line(d: dict) -> str:
    """The deployment table's error: "" for a clean run, the first line of a protocol stage's text (it is
    written to be read), else the most telling line of the captured text."""
    if d.get("stage") in ("ok", ""):
        return ""
    text = d.get("error", "")
    return text.splitlines()[0] if d.get("stage") in PROTOCOL_STAGES and text else short_error(text)


def deployment_frame(deployments: list[dict]) -> pd.DataFrame:
    recs = []
    for d in deployments:
        env = d.get("environment", {})
        recs.append({"checkpoint": d.get("checkpoint", ""), "model": d.get("model", ""), "server": d.get("server", ""),
                     "parser": d.get("parser", ""), "tool_choice": d.get("tool_choice_used", ""),
                     "deployed": bool(d.get("deployed")), "stage": d.get("stage", ""), "error": _error_line(d),
                     **{k: env.get(k, "") for k in ("vllm", "llama_cpp_python", "gpu", "gpu_memory", "driver")}})
    return pd.DataFrame(recs, columns=DEPLOYMENT_COLUMNS)


def lexical_gap(rows: list[dict], lexical: Scores, k: int = SHORTLIST_K) -> tuple[float, float]:
    """(top-1 accuracy, top-k recall) of the lexical ranker over in-catalog utterances."""
    inrows = in_catalog(rows)
    if not inrows:
        return float("nan"), float("nan")
    top = top_actions(lexical, inrows, k)
    gold = np.array([r["gold_tool"] for r in inrows])
    return float(np.mean(top[:, 0] == gold)), float(np.mean((top == gold[:, None]).any(1)))


def native_tables(deployments: list[dict], records: list[pd.DataFrame], rows: list[dict],
                  lexical: Scores, k: int = SHORTLIST_K) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(native_deployment, native_calls) frames; calls only for checkpoints that deployed."""
    gold = {r["utterance_id"]: r["gold_tool"] for r in rows}
    top1, topk = lexical_gap(rows, lexical, k)
    recs = []
    for dep, df in zip(deployments, records):
        if not dep.get("deployed") or df.empty:
            continue
        for cond in [c for c in CONDITIONS if c in set(df["condition"])]:
            m = df[df["condition"] == cond]
            first = m["chosen"].fillna("").str.split(";").str[0]
            g = m["utterance_id"].map(gold)
            inc = g.notna()
            ok = m["error"].fillna("").eq("")
            held = ok & ~m["tools_dropped"]  # answers to prompts that held the tools
            reason = _not_computable(len(m), int(ok.sum()), int(held.sum()), bool(inc.any()),
                                     bool(dep.get("protocol_check")))
            acc = float((first[inc] == g[inc]).mean()) if not reason else float("nan")
            rec = {"checkpoint": dep.get("checkpoint", ""), "model": dep.get("model", ""),
                   "server": dep.get("server", ""), "condition": cond, "tool_choice": ";".join(dict.fromkeys(
                       m["tool_choice"])), "label": PROTOCOL_CHECK if dep.get("protocol_check") else "",
                   "n": len(m), "n_in_catalog": int(inc.sum()), "n_errors": int((~ok).sum()),
                   "n_tools_dropped": int((ok & m["tools_dropped"]).sum()), "accuracy": acc,
                   "no_tool_call_rate": _mean(m.loc[held, "no_tool_call"]),
                   "malformed_rate": _mean(m.loc[held, "malformed"]),
                   "median_latency_ms": _median(m.loc[ok, "latency_ms"]),
                   "median_prompt_tokens": _median(m.loc[ok, "prompt_tokens"]),
                   "median_completion_tokens": _median(m.loc[ok, "completion_tokens"]),
                   "bm25_top1": top1, "bm25_top5": topk, "recovered_share": float("nan"), "not_computable": reason}
            if cond == "top5" and topk > top1 and not reason:
                rec["recovered_share"] = (acc - top1) / (topk - top1)
            recs.append(rec)
    return deployment_frame(deployments), pd.DataFrame(recs, columns=CALL_COLUMNS)


def _not_computable(n: int, n_ok: int, n_held: int, any_in_catalog: bool, protocol_check: bool) -> str:
    """Why accuracy and recovered_share are not given for a condition; "" when they are."""
    if not n_ok:
        return f"not computable: nothing was answered (all {n} requests failed)"
    if not n_held:
        return f"not computable: the server's template dropped the tools in all {n_ok} answers"
    if not any_in_catalog:
        return "not computable: no in-catalog utterance"
    return "not computed: a protocol check's model (protocol_check), whose accuracy is not a result" \
        if protocol_check else ""


def _mean(values: pd.Series) -> float:
    return float(values.astype(float).mean()) if len(values) else float("nan")


def _median(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.median()) if len(values) else float("nan")


def write_native_tables(exp: Experiment):
    """Both tables (outputs ``deployment``, ``calls``) from the per-checkpoint deployment JSONs and records CSVs
    (inputs ``deployments``, ``records``, in roster order) and the lexical scores (input ``lexical``)."""
    rows = exp.main  # the mismatch_hard slice stays out of this study
    deployments = [json.loads(Path(p).read_text(encoding="utf-8")) for p in exp.input.deployments]
    records = [read_records(p) for p in exp.input.records]
    dep_df, calls_df = native_tables(deployments, records, rows, load_scores(exp.input.lexical))
    run = exp.run
    check = any(d.get("protocol_check") for d in deployments)
    label = f" ({PROTOCOL_CHECK})" if check else ""
    write_table(dep_df, exp.output.deployment, "Native tool calling: deployment outcomes (paper Table 7)" + label,
                "A row with deployed false is a deployment outcome, not an accuracy result; stage says where it failed. "
                "docs/metrics.md, 'Native tool calling'.",
                run.seed, paper=DEPLOYMENT_PAPER)
    write_table(calls_df, exp.output.calls, "Native tool calling: accuracy with the full catalog and the BM25 top-5" + label,
                "Checkpoints that deployed; accuracy over in-catalog requests, failures and dropped tools wrong. "
                "docs/metrics.md, 'Native tool calling'.",
                run.seed, paper=CALLS_PAPER)
    return dep_df, calls_df
