"""Benchmark infrastructure shared by the cost, scaling, tokenizer and router benchmarks: timed queries, the
reference BM25 implementations timed beside ours, and jobs run each in its own process (so a job's peak RSS,
``ru_maxrss``, is its own)."""
from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ..retrieval.scores import top_order

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


SHORTLIST = 10  # a request's latency covers its scores and its ten best tools: a router reads a shortlist


def measure(score, batch, queries, batch_queries, warmup) -> tuple[dict, np.ndarray]:
    """Single-query latency of scoring + the top-``SHORTLIST`` ranking (ties in catalog order), batch throughput
    (scores) and the process's peak RSS so far; with the latency of each query (ms)."""
    lat = time_queries(lambda q: top_order(np.asarray(score(q)), SHORTLIST), queries, warmup)
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


@contextlib.contextmanager
def _exit_on_stop_signals():
    """SIGTERM and SIGINT raise SystemExit (status 128 + signal) inside the block.

    By default SIGTERM ends this process at once and leaves the running benchmark child behind, an orphan that
    goes on for its whole run; raised, it unwinds through :func:`run_jobs`, which kills the job server's process
    group (the server and the job it forked), and past the caller's writes, so a stopped job leaves neither
    processes nor outputs.
    """
    stops = (signal.SIGTERM, signal.SIGINT)
    previous = [signal.signal(s, lambda signum, _: sys.exit(128 + signum)) for s in stops]
    try:
        yield
    finally:
        for s, handler in zip(stops, previous):
            signal.signal(s, handler)


def run_jobs(jobs: list[dict], module: str) -> list[dict]:
    """Each job in its own process, ``module._bench(job)`` (JSON in, JSON out); returns their results.

    One job server (:func:`serve`) imports ``module`` once, as a fresh interpreter running it would, and forks a
    child per job from that state: a job's peak RSS (``ru_maxrss``) is still its own, starting from the
    interpreter with the module imported, and no job pays the interpreter's start-up and imports (about a second
    each, where a small job's whole measurement takes less).
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")])}
    recs = []
    with _exit_on_stop_signals(), tempfile.TemporaryFile("w+") as err:
        server = subprocess.Popen([sys.executable, "-m", __name__, module], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=err, text=True, env=env, start_new_session=True)
        try:
            for job in tqdm(jobs, desc="benchmarks", unit="job", file=sys.stderr):
                log.info("benchmarking %s (%s)", job["name"], job.get("impl", module))
                server.stdin.write(json.dumps(job) + "\n")
                server.stdin.flush()
                line = server.stdout.readline()
                if not line.startswith("{"):
                    err.seek(0)
                    raise RuntimeError(f"benchmark of {job['name']} ({job.get('impl', module)}) failed:\n"
                                       f"{err.read()[-3000:]}")
                recs.append(json.loads(line))
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)  # the server and a job it is running
            server.wait()
    return recs


def serve(module: str) -> None:
    """The job server: import ``module``, then per job line on stdin fork a child that runs ``module._bench`` and
    sends back its result (one JSON line on stdout; an empty line when the child failed, its traceback on stderr)."""
    bench = importlib.import_module(module)._bench
    for line in sys.stdin:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the job: its stdout goes to stderr, so nothing it prints can be taken for its result
            os.close(read)
            os.dup2(2, 1)
            status = 1
            try:
                with os.fdopen(write, "w") as out:
                    out.write(json.dumps(bench(json.loads(line))))
                status = 0
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(status)
        os.close(write)
        with os.fdopen(read) as result:
            text = result.read()
        ok = os.waitpid(pid, 0)[1] == 0
        sys.stdout.write((text if ok else "") + "\n")
        sys.stdout.flush()


if __name__ == "__main__":  # the job server of run_jobs
    serve(sys.argv[1])
