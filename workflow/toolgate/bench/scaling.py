"""Scaling benchmark: BM25 (ours, bm25s, rank_bm25) and the dense encoders on catalogs of up to 64,000 tools.

Every size takes a prefix of one seeded sequence (the actions, the local mirror's external tools, then
recombinations), so a larger catalog contains each smaller one; nothing is downloaded. Each (size,
implementation) is a process of its own, so its peak RSS is its own. docs/metrics.md, 'Scaling'.
"""
from __future__ import annotations

import json
import logging
import pickle
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import External, Run, Scaling
from ..core.bm25 import BM25
from ..core.catalog import actions, index_text
from ..core.rankers import RankerSpec, build_ranker, encoder_rankers
from ..core.text import Terms
from ..external import adapters, sources
from ..tables import write_table
from .timing import measure, reference, run_jobs

log = logging.getLogger(__name__)
console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log

EXTERNAL = {"functionchat": (adapters.functionchat_singlecall, adapters.functionchat_calldecision),
            "bfcl": (adapters.bfcl,)}


def external_tools(external: External) -> list[dict]:
    """Distinct tools of the external sets present in a local mirror, in adapter order ([] without a mirror)."""
    tools, seen = [], set()
    for name, loaders in EXTERNAL.items():
        if not (sources.mirror_root(external.mirror) / name).is_dir():
            log.info("no local mirror of %s: the scaling catalogs do without it", name)
            continue
        folder = sources.locate(name, external.mirror)  # a local mirror: verified, never downloaded
        for load in loaders:
            for t in load(folder).catalog:
                key = json.dumps([t["names"], t["descriptions"], t["parameters"]], sort_keys=True, ensure_ascii=False)
                if key not in seen:
                    seen.add(key)
                    tools.append(t)
    return tools


def tool_sequence(base: list[dict], pool: list[dict], size: int, seed: int) -> list[dict]:
    """The first ``size`` tools: ``base``, ``pool`` shuffled with ``seed``, then seeded recombinations."""
    rng = np.random.default_rng(seed)
    real = base + [pool[i] for i in rng.permutation(len(pool))]
    picks = rng.integers(len(real), size=(max(0, size - len(real)), 3))
    mixed = [{"names": real[a]["names"], "keywords": real[a].get("keywords", {}),
              "descriptions": real[b]["descriptions"], "parameters": real[c]["parameters"]} for a, b, c in picks]
    return (real + mixed)[:size]


def sample_queries(rows: list[dict], n: int, seed: int) -> list[str]:
    """``n`` utterance texts drawn without replacement with ``seed`` (all of them when there are fewer)."""
    idx = np.random.default_rng(seed).permutation(len(rows))[:n]
    return [rows[i]["text"] for i in idx]


# ----------------------------------------------------------------------------- one job, in a child interpreter
def _bm25_bytes(impl: str, model) -> int:
    """Serialised size of a reference index: bm25s' own save folder, rank_bm25's pickle."""
    if impl == "rank_bm25":
        return len(pickle.dumps(model))
    with tempfile.TemporaryDirectory() as tmp:
        model.save(tmp)
        return sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file())


def _bench(job: dict, turn=None) -> dict:
    """Build one index or embed one catalog, then time it: runs in a process of its own (taking turns, ``turn``, with
    the other BM25s of its size, :func:`toolgate.bench.timing.run_jobs`)."""
    spec, docs, impl = job["spec"], job["docs"], job["impl"]
    layout = ""
    if impl == "encoder":
        ranker = build_ranker(spec, job["ngram"], job["pad"]).fit(docs[:1])  # loads the model: not build time
        t0 = time.perf_counter()
        ranker.fit(docs)
        build = time.perf_counter() - t0
        nbytes, score, batch = ranker.docs.nbytes, ranker.score, ranker.score_many
    elif impl == "toolgate":
        t0 = time.perf_counter()
        ranker = build_ranker(spec, job["ngram"], job["pad"]).fit(docs)
        build = time.perf_counter() - t0
        nbytes, score, batch, layout = len(ranker.index.to_bytes()), ranker.score, ranker.score_many, ranker.index.layout
    else:
        tok = BM25(terms=Terms(spec["tokenizer"], job["ngram"], job["pad"])).tokenize
        t0 = time.perf_counter()
        model, score = reference(impl, spec, tok, docs)
        build = time.perf_counter() - t0
        nbytes, batch = _bm25_bytes(impl, model), lambda qs: [score(q) for q in qs]
    stats, lat = measure(score, batch, job["queries"], job["queries"], job["warmup"], turn)
    return {"size": job["size"], "ranker": job["name"], "implementation": impl, "layout": layout,
            "build_s": build, "index_bytes": nbytes, **stats, "latencies_ms": lat.tolist()}


# ----------------------------------------------------------------------------- the table
def scaling_jobs(tools: list[dict], queries: list[str], rankers: dict, lexical: str, run: Run,
                 scaling: Scaling) -> list[dict]:
    """Every (size, implementation) to measure: three BM25s per size, each dense encoder up to its cap."""
    base = {"queries": queries, "warmup": scaling.warmup, "ngram": run.text.ngram, "pad": run.text.pad}
    # an encoder row has just embedded the whole catalog: one untimed query is warm-up enough
    enc = {**base, "queries": queries[: scaling.encoder_queries], "warmup": min(1, scaling.warmup)}
    lex = RankerSpec.of(rankers[lexical]).entry  # the reference BM25s read its parameters
    dense = {n: rankers[n] for n in encoder_rankers(rankers)}
    variants = {lex["variant"], *(s["variant"] for s in dense.values())}
    texts = {v: [index_text(t, v, run.langs) for t in tools] for v in variants}
    jobs = []
    for size in sorted(scaling.sizes):
        impls = ["toolgate", "bm25s"] + (["rank_bm25"] if size <= scaling.rank_bm25_max else [])
        jobs += [{**base, "size": size, "name": lexical, "impl": i, "spec": lex, "docs": texts[lex["variant"]][:size],
                  "turns": f"{lexical}@{size}"} for i in impls]
        if size <= scaling.encoder_max:
            jobs += [{**enc, "size": size, "name": n, "impl": "encoder", "spec": s, "docs": texts[s["variant"]][:size]}
                     for n, s in dense.items()]
    return jobs


def with_ratios(df: pd.DataFrame) -> pd.DataFrame:
    """On our rows: the median over queries of our latency over a reference's on the same query (below 1: ours
    is faster). Paired by query because one query's latency depends on how many documents it touches and the
    shortlist it selects from, so the latencies are bimodal at large sizes and a ratio of medians would jump between modes."""
    lat = {(r.size, r.implementation): np.asarray(r.latencies_ms)
           for r in df.itertuples() if r.implementation != "encoder"}
    for ref in ("bm25s", "rank_bm25"):
        df[f"ours_over_{ref}"] = [float(np.median(lat[s, "toolgate"] / lat[s, ref]))
                                  if impl == "toolgate" and (s, ref) in lat else np.nan
                                  for s, impl in zip(df["size"], df["implementation"])]
    return df.drop(columns="latencies_ms")


def scaling_frame(tools: list[dict], queries: list[str], rankers: dict, lexical: str, run: Run,
                  scaling: Scaling) -> pd.DataFrame:
    jobs = scaling_jobs(tools, queries, rankers, lexical, run, scaling)
    return with_ratios(pd.DataFrame(run_jobs(jobs, __name__)))


def write_scaling(exp) -> pd.DataFrame:
    """``exp.external``: where a local mirror of the external sets may hold more tools; writes ``exp.output.table``."""
    run, scaling, rankers = exp.run, exp.scaling, exp.rankers
    base, pool = actions(exp.catalog), external_tools(exp.external)
    tools = tool_sequence(base, pool, max(scaling.sizes), run.seed)
    real = len(base) + len(pool)
    console.info("scaling catalogs: %d actions, %d external tools, %d recombined; sizes %s", len(base), len(pool),
                 max(0, len(tools) - real), ", ".join(map(str, sorted(scaling.sizes))))
    df = scaling_frame(tools, sample_queries(exp.main, scaling.queries, run.seed), rankers, exp.lexical, run, scaling)
    df.insert(1, "recombined", (df["size"] - real).clip(lower=0))
    dense = encoder_rankers(rankers)
    write_table(df, exp.output.table, "Scaling: BM25 implementations and encoders against catalog size (CPU)",
                f"Catalog of `size` tools: {len(base)} actions, then "
                + (f"{len(pool)} external tools, then " if pool else "")
                + "`recombined` tools (seeded)" + ("" if pool else "; no local mirror of the external sets") + ". "
                f"rank_bm25 runs to {scaling.rank_bm25_max} tools, the encoders ({', '.join(dense) or 'none'}) to "
                f"{scaling.encoder_max}. Compare by ours_over_*, not medians. docs/metrics.md, 'Scaling'.",
                run.seed)
    return df
