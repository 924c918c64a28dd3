"""The ``native_tables`` rule: deployment outcomes (paper Table 7) and native-caller accuracy.

Measures per checkpoint and condition: accuracy (first called tool = gold tool,
over in-catalog utterances; a failed request counts as wrong), no_tool_call_rate
and malformed_rate (over the answers received), and for ``top5`` the
recovered_share (accuracy - bm25_top1) / (bm25_top5 - bm25_top1), the part of the
lexical top-1/top-5 gap the native caller closes (as in :mod:`toolgate.retrieval.rerank`).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from .. import io
from ..config import Run
from ..retrieval.scores import Scores, load_scores, top_actions
from ..tables import write_table
from .protocol import CONDITIONS, SHORTLIST_K, short_error

# reported.yaml key prefixes of the paper values each table reproduces
DEPLOYMENT_PAPER = ("native.roster_size", "native.checkpoints_deployed", "intro.native_checkpoints_not_deployed")
CALLS_PAPER = ("native.rows_per_condition", "native.lfm25.no_tool_call", "rerank.recovered_share.native")
CALL_COLUMNS = ["checkpoint", "model", "condition", "n", "n_in_catalog", "n_errors", "accuracy", "no_tool_call_rate",
                "malformed_rate", "median_latency_ms", "bm25_top1", "bm25_top5", "recovered_share"]
DEPLOYMENT_COLUMNS = ["checkpoint", "model", "parser", "deployed", "stage", "error", "vllm", "gpu", "gpu_memory",
                      "driver"]


def read_records(path) -> pd.DataFrame:
    """A records CSV with empty strings kept as such (not NaN)."""
    df = pd.read_csv(path, dtype={"chosen": str, "error": str, "utterance_id": str}, keep_default_na=False)
    for col in ("no_tool_call", "malformed"):
        df[col] = df[col].astype(str).str.lower().eq("true")
    return df


def deployment_frame(deployments: list[dict]) -> pd.DataFrame:
    recs = []
    for d in deployments:
        env = d.get("environment", {})
        recs.append({"checkpoint": d.get("checkpoint", ""), "model": d.get("model", ""), "parser": d.get("parser", ""),
                     "deployed": bool(d.get("deployed")), "stage": d.get("stage", ""),
                     "error": "" if d.get("deployed") else short_error(d.get("error", "")),
                     "vllm": env.get("vllm", ""), "gpu": env.get("gpu", ""), "gpu_memory": env.get("gpu_memory", ""),
                     "driver": env.get("driver", "")})
    return pd.DataFrame(recs, columns=DEPLOYMENT_COLUMNS)


def lexical_gap(rows: list[dict], lexical: Scores, k: int = SHORTLIST_K) -> tuple[float, float]:
    """(top-1 accuracy, top-k recall) of the lexical ranker over in-catalog utterances."""
    inrows = io.in_catalog(rows)
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
            acc = float((first[inc] == g[inc]).mean()) if inc.any() else float("nan")
            rec = {"checkpoint": dep.get("checkpoint", ""), "model": dep.get("model", ""), "condition": cond,
                   "n": len(m), "n_in_catalog": int(inc.sum()), "n_errors": int((~ok).sum()), "accuracy": acc,
                   "no_tool_call_rate": float(m.loc[ok, "no_tool_call"].mean()) if ok.any() else float("nan"),
                   "malformed_rate": float(m.loc[ok, "malformed"].mean()) if ok.any() else float("nan"),
                   "median_latency_ms": float(m.loc[ok, "latency_ms"].median()) if ok.any() else float("nan"),
                   "bm25_top1": top1, "bm25_top5": topk, "recovered_share": float("nan")}
            if cond == "top5" and topk > top1:
                rec["recovered_share"] = (acc - top1) / (topk - top1)
            recs.append(rec)
    return deployment_frame(deployments), pd.DataFrame(recs, columns=CALL_COLUMNS)


def write_native_tables(catalog_path, utterances_path, lexical_path, deployment_paths, record_paths,
                        out_deployment_csv, out_calls_csv, run: Run):
    """Both tables from the per-checkpoint deployment JSONs and records CSVs (in roster order)."""
    _, rows = io.load_inputs(catalog_path, utterances_path, run.langs)
    rows = io.main_set(rows)  # the mismatch_hard slice stays out of this study
    deployments = [json.loads(Path(p).read_text(encoding="utf-8")) for p in deployment_paths]
    records = [read_records(p) for p in record_paths]
    dep_df, calls_df = native_tables(deployments, records, rows, load_scores(lexical_path))
    write_table(dep_df, out_deployment_csv, "Native tool calling: deployment outcomes (paper Table 7)",
                "One row per roster checkpoint served by vLLM with tool_choice=\"required\". A row with deployed "
                "false is a deployment outcome, not an accuracy result: stage names where it failed (vLLM not "
                "importable, no CUDA device, weights not admitted, parser unavailable, out of memory, readiness "
                "timeout, ...) and error is the shortened captured text (full text in results/*/native/"
                "<checkpoint>.deployment.json). vllm, gpu, gpu_memory and driver describe the machine that ran it.",
                run.seed, paper=DEPLOYMENT_PAPER)
    write_table(calls_df, out_calls_csv, "Native tool calling: accuracy with the full catalog and the BM25 top-5",
                "Only checkpoints that deployed. accuracy: first called tool = gold tool over in-catalog utterances "
                "(failed requests count as wrong); no_tool_call_rate and malformed_rate over the answers received; "
                "recovered_share (top5) = (accuracy - bm25_top1) / (bm25_top5 - bm25_top1). Non-deployed "
                "checkpoints appear in native_deployment as deployment outcomes, not here as accuracy results.",
                run.seed, paper=CALLS_PAPER)
    return dep_df, calls_df
