"""A synthetic experiment for router selection: 4 actions, chat and delegate routes, 120 requests in pairs.

BM25 scores put each in-catalog request's gold tool on top and each out-of-catalog request's own route entry on
top of the pool, so the single-pool ladder routes (almost) everything right; ``clean`` is a gate that separates
in from out perfectly, ``noise`` one that knows nothing.
"""
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd

from conftest import tool, utterance, write_jsonl
from toolgate.config import run, section
from toolgate.core.scores import Scores, save_scores
from toolgate.core.signals import Signal, registry
from toolgate.experiment import Experiment

ACTIONS = ["set_alarm", "make_call", "check_battery", "set_wifi"]


def experiment(tmp_path, seed: int = 0, **router):
    """The experiment (:class:`toolgate.experiment.Experiment`) of files under ``tmp_path`` as an exported router
    reads them; ``router``: its router settings (:func:`settings`)."""
    rng = np.random.default_rng(seed)
    cat = [tool(a, required=()) for a in ACTIONS] + [tool(r, required=(), kind="route", mutating=False)
                                                     for r in ("chat", "delegate")]
    rows = []
    for i in range(60):  # texts the evidence rules let through: an action's name, a plain out-of-catalog request
        if i < 36:
            r = {**utterance(i, tool_id=ACTIONS[i % 4]), "text": f"{ACTIONS[i % 4].replace('_', ' ')} {i}"}
        else:
            r = {**utterance(i, tool_id=None, outcome="chat" if i % 3 == 0 else "delegate", slice_="out"),
                 "text": f"tell me about the weather {i}"}
        rows += [r, {**r, "utterance_id": f"u{i}-ko", "lang": "ko", "text": f"{r['text']} 요청"}]
    ids = [t["id"] for t in cat]
    m = rng.uniform(0, 1, (len(rows), len(cat)))
    y = np.array([r["gold_tool"] is not None for r in rows], int)
    for k, r in enumerate(rows):
        m[k, ids.index(r["gold_tool"] or r["gold_outcome"])] += 4.0
    uids = np.array([r["utterance_id"] for r in rows])
    save_scores(tmp_path / "bm25.npz", Scores(uids, np.array(ids), np.array([t["kind"] for t in cat]), m))
    fold = np.array([int(r["pair_id"][1:]) % 5 for r in rows])
    signals = pd.DataFrame({"utterance_id": uids, "slice": [r["slice"] for r in rows], "in_catalog": y, "fold": fold,
                            "clean": y + 0.1 * rng.uniform(size=len(rows)), "noise": rng.uniform(size=len(rows))})
    signals.to_csv(tmp_path / "signals.csv", index=False)
    pd.DataFrame({"ranker": ["bm25"], "implementation": ["toolgate"], "median_ms": [0.05]}).to_csv(
        tmp_path / "cost.csv", index=False)
    (tmp_path / "gates.json").write_text(json.dumps({}))
    inputs = SimpleNamespace(catalog=write_jsonl(tmp_path / "catalog.jsonl", cat),
                             utterances=write_jsonl(tmp_path / "u.jsonl", rows), signals=tmp_path / "signals.csv",
                             gates=tmp_path / "gates.json", cost=tmp_path / "cost.csv", scores=[tmp_path / "bm25.npz"])
    reg = {**registry("bm25", []), **{n: Signal(n, "score_feature", n, n, ranker="bm25") for n in ("clean", "noise")}}
    return Experiment(SimpleNamespace(run=run(seed, ("ko", "en")), gate=section("gate", {"resamples": 500}),
                                      routing=section("routing", {"grid": 11}), signals=reg, rankers=RANKERS,
                                      provenance=PROVENANCE, router=settings(**router)), inputs)


RANKERS = {"bm25": {"type": "bm25", "variant": "E1"}}
PROVENANCE = {"experiment": "synthetic", "config_hash": "0" * 64, "lexical": "bm25",
              "limits": {"max_chars": 1000, "top_k": 3}}


def settings(**kw):
    return section("router", kw)
