"""Cost benchmark: index/model size, per-query latency, throughput and peak memory per ranker.

Each ranker runs in its own fresh interpreter (``python -m toolgate.cost``) so its peak RSS (``ru_maxrss``) is
its own; that figure includes the Python interpreter and numpy (about the same
base for every row). Latency covers whole-catalog scoring plus ranking of one
query, after ``warmup`` untimed queries; model loading is excluded, and an
encoder's catalog embeddings are read from the cache the scores rule filled
(queries are always encoded). Our BM25 is
timed beside ``rank_bm25`` and ``bm25s`` on the same tokenised queries, in the
same run.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from . import io
from .bm25 import BM25
from .catalog import index_text
from .config import Cost, Run
from .rankers import RankerSpec, fit_ranker, size_bytes, with_members
from .scores import top_order
from .tables import write_table

log = logging.getLogger(__name__)


def time_queries(fn, queries, warmup) -> np.ndarray:
    """Milliseconds of each ``fn(query)``, after ``warmup`` untimed calls."""
    for q in queries[:warmup]:
        fn(q)
    out = np.empty(len(queries))
    for i, q in enumerate(queries):
        t0 = time.perf_counter()
        fn(q)
        out[i] = time.perf_counter() - t0
    return out * 1000.0


def measure(score, batch, queries, batch_queries, warmup) -> tuple[dict, np.ndarray]:
    """Single-query latency of scoring + ranking, batch throughput and the process's peak RSS so far; with the
    latency of each query (ms)."""
    lat = time_queries(lambda q: top_order(np.asarray(score(q))), queries, warmup)
    if warmup:  # the batch path has first-call costs of its own
        batch(batch_queries[:warmup])
    t0 = time.perf_counter()
    batch(batch_queries)
    dt = time.perf_counter() - t0
    return {"median_ms": float(np.median(lat)), "p95_ms": float(np.percentile(lat, 95)),
            "batch_qps": len(batch_queries) / dt if dt > 0 else float("nan"),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "queries_timed": len(queries)}, lat


def reference(impl: str, spec: dict, tok, texts: list[str]):
    """``rank_bm25`` (BM25Okapi) or ``bm25s`` (lucene) indexed on ``texts`` split by our tokenizer ``tok``.

    Returns (model, score of one query text) so both are timed on the same tokens as ours.
    """
    docs = [tok(t) for t in texts]
    if impl == "rank_bm25":
        from rank_bm25 import BM25Okapi

        model = BM25Okapi(docs, k1=spec["k1"], b=spec["b"], epsilon=spec["epsilon"])
    else:
        import bm25s

        model = bm25s.BM25(k1=spec["k1"], b=spec["b"], method="lucene")
        model.index(docs, show_progress=False)
    return model, lambda q: model.get_scores(tok(q))


def _bench(job: dict) -> dict:
    """Runs in a child process: build one ranker, time it, report."""
    catalog, langs, spec = job["catalog"], job["langs"], job["spec"]
    size = None
    if job["impl"] == "pipeline":  # the whole decision: rank, then gate (one encoding when they share a model)
        fit = lambda s: fit_ranker(s, catalog, langs, job["ngram"], job["pad"], job["cache"], cache_queries=False)
        ranker = fit(spec)
        gate = ranker if job["shared"] else fit(job["gate_spec"])
        acts = np.array([t["kind"] == "action" for t in catalog])

        def score(q):  # the gate value is computed as a deployment would; timing needs only its cost
            s = ranker.score(q)
            (s if job["shared"] else gate.score(q))[acts].max()
            return s

        def batch(qs):  # batched like the router's decide_many: one encoder call per model
            s = ranker.score_many(qs)
            (s if job["shared"] else gate.score_many(qs))[:, acts].max(1)
            return s
    elif job["impl"] == "toolgate":
        ranker = fit_ranker(spec, catalog, langs, job["ngram"], job["pad"], job["cache"], cache_queries=False)
        score, batch = ranker.score, ranker.score_many
        size = size_bytes(ranker, job.get("index_path"))
    else:
        tok = BM25(ngram=job["ngram"], pad=job["pad"], tokenizer=spec.get("tokenizer", "char")).tokenize
        _, score = reference(job["impl"], spec, tok, [index_text(t, spec["variant"], langs) for t in catalog])
        batch = lambda qs: [score(q) for q in qs]
    stats, _ = measure(score, batch, job["queries"], job["queries"], job["warmup"])
    return {"ranker": job["name"], "implementation": job["impl"], "size_bytes": size, **stats}


@contextlib.contextmanager
def _exit_on_stop_signals():
    """SIGTERM and SIGINT raise SystemExit (status 128 + signal) inside the block.

    By default SIGTERM ends this process at once and leaves the running benchmark child behind, an orphan that
    goes on for its whole run; raised, it unwinds through ``subprocess.run``, which kills that child, and past the
    caller's writes, so a stopped job leaves neither processes nor outputs.
    """
    stops = (signal.SIGTERM, signal.SIGINT)
    previous = [signal.signal(s, lambda signum, _: sys.exit(128 + signum)) for s in stops]
    try:
        yield
    finally:
        for s, handler in zip(stops, previous):
            signal.signal(s, handler)


def run_jobs(jobs: list[dict], module: str = "toolgate.cost") -> list[dict]:
    """Each job in a fresh interpreter running ``python -m module`` (JSON in, JSON out); returns their results."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])}
    recs = []
    with _exit_on_stop_signals():
        for job in tqdm(jobs, desc="benchmarks", unit="job", file=sys.stderr):
            log.info("benchmarking %s (%s)", job["name"], job.get("impl", module))
            proc = subprocess.run([sys.executable, "-m", module], input=json.dumps(job), capture_output=True,
                                  text=True, env=env)
            if proc.returncode != 0:
                raise RuntimeError(f"benchmark of {job['name']} ({job.get('impl', module)}) failed:\n{proc.stderr[-3000:]}")
            recs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return recs


def bench_base(catalog, rows, run: Run, cost: Cost) -> dict:
    texts = [r["text"] for r in rows]
    return {"catalog": catalog, "queries": texts[: cost.queries], "warmup": cost.warmup,
            "langs": run.langs, "ngram": run.text.ngram, "pad": run.text.pad, "cache": run.cache}


def pipeline_cost_frame(catalog, rows, pipelines: dict, rankers: dict, run: Run, cost: Cost) -> pd.DataFrame:
    """The whole decision of each (ranker, gate) pipeline, one fresh interpreter each."""
    base, recs = bench_base(catalog, rows, run, cost), []
    for name, p in pipelines.items():
        res = run_jobs([{**base, "name": name, "impl": "pipeline", "spec": rankers[p["ranker"]],
                         "gate_spec": rankers[p["gate"]], "shared": p["ranker"] == p["gate"]}])[0]
        recs.append({"pipeline": name, "ranker": p["ranker"], "gate": p["gate"],
                     **{k: res[k] for k in ("median_ms", "p95_ms", "batch_qps", "peak_rss_mb", "queries_timed")}})
    return pd.DataFrame(recs)


def cost_frame(catalog, rows, rankers: dict, lexical: str, run: Run, cost: Cost, index_path=None) -> pd.DataFrame:
    base = bench_base(catalog, rows, run, cost)
    jobs = [{**base, "name": name, "spec": with_members(spec, rankers), "impl": "toolgate",
             "index_path": index_path if name == lexical else None} for name, spec in rankers.items()]
    jobs += [{**base, "name": f"{lexical} (reference)", "spec": RankerSpec.of(rankers[lexical]).entry,
              "impl": impl} for impl in ("rank_bm25", "bm25s")]
    df = pd.DataFrame(run_jobs(jobs))
    ours = df.loc[(df["ranker"] == lexical) & (df["implementation"] == "toolgate"), "median_ms"].iloc[0]
    df["median_ratio_to_ours"] = df["median_ms"] / ours
    return df


def write_cost(catalog_path, utterances_path, rankers: dict, lexical: str, outputs, run: Run, cost: Cost):
    """``outputs``: (cost table, serialised lexical index) paths."""
    out_csv, index_path = outputs
    catalog, rows = io.load_inputs(catalog_path, utterances_path, run.langs)
    rows = io.main_set(rows)  # the mismatch_hard slice stays out of this study
    df = cost_frame(catalog, rows, rankers, lexical, run, cost, index_path)
    write_table(df, out_csv, "Cost per ranker (one query, whole catalog, CPU)",
                "median/p95: single-query latency in ms (scoring + ranking, model loaded, after warm-up). "
                "median_ratio_to_ours: this row's median over our BM25's (rank_bm25 and bm25s on the same tokens). "
                "peak_rss_mb includes the interpreter. Timings vary run to run; they are measurements, not regression "
                "targets.", run.seed, paper=("intro.index", "cost."))
    return df


if __name__ == "__main__":  # one benchmark job: JSON on stdin, JSON result on the last stdout line
    print(json.dumps(_bench(json.loads(sys.stdin.read()))))
