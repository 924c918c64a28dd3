"""Benchmark infrastructure shared by the cost, scaling, tokenizer and router benchmarks: timed queries, the
reference BM25 implementations timed beside ours, and jobs run each in its own process (so a job's peak RSS,
``ru_maxrss``, is its own), alone or taking turns with the jobs it is compared with."""
from __future__ import annotations

import contextlib
import importlib
import itertools
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

from ..core.scores import top_order

log = logging.getLogger(__name__)
console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log


TURN_QUERIES = 10  # timed queries per turn of jobs that take turns (run_jobs)


def time_queries(fn, queries, warmup, turn=None) -> np.ndarray:
    """Milliseconds of each ``fn(query)``, after ``warmup`` untimed calls.

    ``turn`` (:class:`Turns`), if given, is taken after every ``TURN_QUERIES`` timed calls and after the last: each
    turn starts with the query timed before it, untimed, so it starts as warm as the first turn does after the
    warm-up (the jobs in between have filled the caches with their own data).
    """
    for q in queries[:warmup]:
        fn(q)
    out = np.empty(len(queries))
    for i, q in enumerate(queries):
        if turn and i and i % TURN_QUERIES == 0:
            turn()
            fn(queries[i - 1])
        t0 = time.perf_counter()
        fn(q)
        out[i] = time.perf_counter() - t0
    if turn:
        turn()
    return out * 1000.0


SHORTLIST = 10  # a request's latency covers its scores and its ten best tools: a router reads a shortlist
# a batch is timed up to 3 times within a second and its fastest run kept: one run is a single timing, and in one
# run of the scaling rule our BM25's batch at 16,000 tools measured 1,524 queries/s, in the next two 4,287 and 4,334
BATCH_RUNS, BATCH_BUDGET_S = 3, 1.0


def measure(score, batch, queries, batch_queries, warmup, turn=None) -> tuple[dict, np.ndarray]:
    """Single-query latency of scoring + the top-``SHORTLIST`` ranking (ties in catalog order), batch throughput
    (scores, the fastest of up to ``BATCH_RUNS`` runs within ``BATCH_BUDGET_S``) and the process's peak RSS so
    far; with the latency of each query (ms). ``turn``: see :func:`time_queries`; the batch runs in the turn after
    the last query."""
    lat = time_queries(lambda q: top_order(np.asarray(score(q)), SHORTLIST), queries, warmup, turn)
    if warmup:  # the batch path has first-call costs of its own
        batch(batch_queries[:warmup])
    runs = []
    while len(runs) < BATCH_RUNS and sum(runs) < BATCH_BUDGET_S:
        t0 = time.perf_counter()
        batch(batch_queries)
        runs.append(time.perf_counter() - t0)
    dt = min(runs)
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


class Turns:
    """A job's place in a ring of jobs that take turns (one pipe per job, read by it and written by the job
    before it): one holds the turn at a time, the others wait in a read, using no CPU. ``wait`` fails when the
    job before has ended without handing it on (it failed, or timed fewer queries)."""

    def __init__(self, read: int, write: int):
        self.read, self.write = read, write

    def wait(self) -> None:
        if not os.read(self.read, 1):
            raise RuntimeError("a job this one takes turns with ended before handing on its turn")

    def give(self) -> None:
        with contextlib.suppress(BrokenPipeError):  # the next job has finished
            os.write(self.write, b"t")

    def __call__(self) -> None:
        self.give()
        self.wait()


def run_jobs(jobs: list[dict], module: str) -> list[dict]:
    """Each job in its own process, ``module._bench(job)`` (JSON in, JSON out); returns their results.

    One job server (:func:`serve`) imports ``module`` once, as a fresh interpreter running it would, and forks a
    child per job from that state: a job's peak RSS (``ru_maxrss``) is still its own, starting from the
    interpreter with the module imported, and no job pays the interpreter's start-up and imports (about a second
    each, where a small job's whole measurement takes less).

    Consecutive jobs with the same ``turns`` key run side by side, each in its own process, and take turns,
    ``module._bench(job, turn)``: the first builds and times its first ``TURN_QUERIES`` queries while the others
    wait, then the second, and so on, then each the next queries (:func:`time_queries`), and each its batch. A
    change in the machine's speed during the run then falls on all of them alike, where jobs timed one after
    another each met another one; and they all run on one core, because the cores of a virtual machine need not
    be alike (on this 2-core one, with the same code, ours-over-bm25s at 16,000 tools measured 0.43-0.98 in six
    runs one after another, 0.59-1.05 in three taking turns on either core, 0.72-0.85 in seven taking turns on
    one). Such jobs time the same number of queries.
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")])}
    groups = [list(g) for _, g in itertools.groupby(jobs, key=lambda j: j.get("turns") or id(j))]
    recs, t0 = [], time.perf_counter()
    with _exit_on_stop_signals(), tempfile.TemporaryFile("w+") as err, \
            tqdm(total=len(jobs), desc="benchmarks", unit="job", file=sys.stderr) as progress:
        server = subprocess.Popen([sys.executable, "-m", __name__, module], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=err, text=True, env=env, start_new_session=True)
        try:
            for group in groups:
                for job in group:
                    log.info("benchmarking %s (%s)", job["name"], job.get("impl", module))
                # the terminal gets a line per group (the tqdm bar goes to the log), written between measurements
                first, last = len(recs) + 1, len(recs) + len(group)
                console.info("benchmark %s/%d: %s (%s)%s", first if first == last else f"{first}-{last}", len(jobs),
                             group[0]["name"], ", ".join(j.get("impl", module) for j in group),
                             f" at {group[0]['size']} tools" if "size" in group[0] else "")
                server.stdin.write(json.dumps(group) + "\n")
                server.stdin.flush()
                for job in group:
                    line = server.stdout.readline()
                    if not line.startswith("{"):
                        err.seek(0)
                        raise RuntimeError(f"benchmark of {job['name']} ({job.get('impl', module)}) failed:\n"
                                           f"{err.read()[-3000:]}")
                    recs.append(json.loads(line))
                progress.update(len(group))
            if len(groups) > 1:
                console.info("benchmarks: %d jobs in %.1f s", len(jobs), time.perf_counter() - t0)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)  # the server and a job it is running
            server.wait()
    return recs


def _child(bench, job: dict, write: int, turns: Turns | None) -> None:
    """A forked job: its result on ``write``, its stdout to stderr (nothing it prints can be taken for its
    result); exits, with status 1 when it failed."""
    os.dup2(2, 1)
    status = 1
    try:
        if turns:
            turns.wait()
        res = bench(job, turns) if turns else bench(job)
        with os.fdopen(write, "w") as out:
            out.write(json.dumps(res))
        status = 0
        if turns:
            turns.give()  # the next job's batch
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(status)


def serve(module: str) -> None:
    """The job server: import ``module``, then per line of jobs on stdin fork a child per job that runs
    ``module._bench`` and send back each result in order (one JSON line on stdout; an empty line when the child
    failed, its traceback on stderr). The jobs of a line of more than one take turns (:class:`Turns`)."""
    bench = importlib.import_module(module)._bench
    for line in sys.stdin:
        jobs = json.loads(line)
        ring = [os.pipe() for _ in jobs] if len(jobs) > 1 else []
        children, cpu = [], min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        for k, job in enumerate(jobs):
            read, write = os.pipe()
            mine = (ring[k][0], ring[(k + 1) % len(ring)][1]) if ring else ()
            pid = os.fork()
            if pid == 0:
                os.close(read)
                for fd in {fd for pair in ring for fd in pair} - set(mine):  # a failed job's ring pipe then ends
                    os.close(fd)
                if ring and cpu is not None:  # jobs that take turns share one core: a VM's cores differ in speed
                    os.sched_setaffinity(0, {cpu})
                _child(bench, job, write, Turns(*mine) if ring else None)
            os.close(write)
            children.append((pid, read))
        if ring:
            os.write(ring[0][1], b"t")  # the first job's turn
            for fd in {fd for pair in ring for fd in pair}:
                os.close(fd)
        for pid, read in children:
            with os.fdopen(read) as result:
                text = result.read()
            ok = os.waitpid(pid, 0)[1] == 0
            sys.stdout.write((text if ok else "") + "\n")
        sys.stdout.flush()


if __name__ == "__main__":  # the job server of run_jobs
    serve(sys.argv[1])
