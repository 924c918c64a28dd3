"""Cost of the product: load time, decision latency, throughput and memory of each exported router.

Each router is measured in its own process (the cost rule's machinery, :func:`toolgate.bench.timing.run_jobs`:
forked from an interpreter that has imported this module), so its peak RSS is its own, interpreter included.
Latency is one ``decide`` call (rank + gate + band), after warm-up; the stage
columns split it into lexical scoring, ranking and gating. Each router is timed with its encoders on one thread
(``Router.load``'s default, since a phone gives a request one core) and with the backend's own thread count.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..bench.timing import run_jobs, time_queries
from ..config import Run
from ..core.artifact import MANIFEST
from ..core.runtime import Router, RouterError, check_request
from ..tables import write_table

GOALS = {"load_s": 0.5, "p50_ms": 3.0, "p95_ms": 6.0, "peak_rss_mb": 300.0}  # issue 25's, for the selected router
LIGHT = {"import_load_s": 0.25, "fresh_rss_mb": 60.0}  # issue 37's, for a router without an encoder
# A fresh interpreter, as an application embedding the router starts: import, load, one decision. Its peak RSS is
# VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's (the study's interpreter) and survives exec.
FRESH = ("import json, sys, time; t0 = time.perf_counter(); from toolgate import Router; "
         "r = Router.load(sys.argv[1], threads=int(sys.argv[2]) or None); t = time.perf_counter() - t0; "
         "r.decide('hello'); hwm = [x for x in open('/proc/self/status') if x.startswith('VmHWM')]; "
         "print(json.dumps({'import_load_s': t, 'fresh_rss_mb': float(hwm[0].split()[1]) / 1024 if hwm else None}))")


def fresh(router, threads) -> dict:
    """Import + load time and peak RSS of ``router`` in a fresh interpreter (:data:`FRESH`)."""
    out = subprocess.run([sys.executable, "-c", FRESH, str(router), str(threads or 0)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def _bench(job: dict) -> dict:
    """Runs in a child process: load one router, time it, report."""
    t0 = time.perf_counter()
    router = Router.load(job["router"], threads=job["threads"])
    load_s = time.perf_counter() - t0
    queries = job["queries"]
    lat = time_queries(router.decide, queries, job["warmup"])
    few = queries[:50]
    stages = {"lexical_ms": float(np.median(time_queries(router.lexical.score, few, 0))),
              "encode_ms": float(np.median(time_queries(lambda q: [e.encode_queries([q]) for e in router.encoders.values()],
                                                        few, 0))),
              "scores_ms": float(np.median(time_queries(lambda q: router.scores([q], one=True), few, 0)))}
    t0 = time.perf_counter()
    router.decide_many(queries)
    batch_s = time.perf_counter() - t0
    folder = Path(job["router"])
    m = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    sel = m.get("selection") or {}
    return {"pipeline": m["pipeline"]["name"], "kind": m["pipeline"]["kind"], "ranker": m["pipeline"]["ranker"],
            "gate": m["pipeline"]["gate"] or ("examples" if m["pipeline"]["kind"] == "examples" else "(pool top score)"),
            "chosen": sel.get("chosen", ""),
            "encoders": len(m["encoders"]), "encoder_threads": job["threads"] or "backend", "load_s": load_s,
            "p50_ms": float(np.median(lat)), "p95_ms": float(np.percentile(lat, 95)),
            **stages, "batch_qps": len(queries) / batch_s,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "artifact_kb": sum(f["bytes"] for f in m["files"].values()) / 1024 + (folder / MANIFEST).stat().st_size / 1024,
            "catalog_kb": m["files"]["catalog.jsonl"]["bytes"] / 1024, "queries_timed": len(queries),
            **fresh(folder, job["threads"])}


def accepted(texts, max_chars: int) -> list[str]:
    """The requests a router accepts (:func:`toolgate.core.runtime.check_request`), in order."""
    out = []
    for t in texts:
        try:
            out.append(check_request(t, max_chars))
        except RouterError:
            pass
    return out


def router_cost_frame(router_dirs, rows, settings, run: Run) -> pd.DataFrame:
    texts = accepted([r["text"] for r in rows], settings.max_chars)
    base = {"queries": texts[: settings.queries], "warmup": settings.warmup}
    jobs = [{**base, "name": str(d), "router": str(d), "threads": t} for d in router_dirs for t in (None, 1)]
    df = pd.DataFrame(run_jobs(jobs, __name__))
    for col, goal in GOALS.items():
        df[f"{col.split('_')[0]}_goal_met"] = df[col] <= goal
    for col, goal in LIGHT.items():  # a goal for a router without an encoder: empty for one with
        df[f"{col.rsplit('_', 1)[0]}_goal_met"] = (df[col] <= goal).where(df["encoders"] == 0)
    return df


def write_router_cost(exp) -> pd.DataFrame:
    """tables/router_cost.csv (``output.table``) of each exported router (``input.routers``: their router.json),
    timed on the experiment's main-set requests (``router``: the settings, timed-query counts among them)."""
    rows, settings, run = exp.main, exp.router, exp.run
    df = router_cost_frame([Path(m).parent for m in exp.input.routers], rows, settings, run)
    refused = len(rows) - len(accepted([r["text"] for r in rows], settings.max_chars))
    write_table(df, exp.output.table, "Cost of the exported routers (one request at a time, CPU)",
                f"Goals, selected router on 2 cores: load <= {GOALS['load_s']} s, p50 <= {GOALS['p50_ms']} ms, p95 <= "
                f"{GOALS['p95_ms']} ms, RSS <= {GOALS['peak_rss_mb']} MB; without an encoder: import + load <= "
                f"{LIGHT['import_load_s']} s, RSS <= {LIGHT['fresh_rss_mb']} MB. A measurement. "
                + (f"{refused} refused requests not timed. " if refused else "") + "docs/metrics.md, 'Router cost'.",
                run.seed)
    return df
