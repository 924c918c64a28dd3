"""The gate study: every registry signal fitted, G3 kept."""
import json

import numpy as np

from toolgate.config import run as make_run
from toolgate.config import section
from toolgate.core.models import oof_scores
from toolgate.core.scores import Scores
from toolgate.core.signals import FEATURES, fitted, registry
from toolgate.gate.study import GateStudy

from .test_inputs import _unit


def _study_inputs(n_pairs=24, seed=0):
    """A small two-language set: in-catalog pairs (match / mismatch / mismatch_hard) and out pairs."""
    rng = np.random.default_rng(seed)
    rows, slices = [], ["match", "mismatch", "out", "mismatch_hard"]
    for p in range(n_pairs):
        sl = slices[p % 4]
        for lang in ("ko", "en"):
            rows.append({"utterance_id": f"u{p}-{lang}", "pair_id": f"u{p}", "lang": lang,
                         "text": "word " * (3 + p % 5) + lang, "slice": sl, "subtype": "s",
                         "gold_outcome": "delegate" if sl == "out" else "action",
                         "gold_tool": None if sl == "out" else f"t{p % 3}"})
    y = np.array([r["slice"] != "out" for r in rows], float)
    ids = np.array([r["utterance_id"] for r in rows])
    tools, kinds = np.array(["t0", "t1", "t2", "chat", "delegate"]), np.array(["action"] * 3 + ["route"] * 2)
    lex = Scores(ids, tools, kinds, rng.gamma(2, 1, (len(rows), 5)) + 2 * y[:, None] * (np.arange(5) == 0))
    cos = Scores(ids, tools, kinds, rng.uniform(0, 0.5, (len(rows), 5)) + 0.3 * y[:, None])
    emb = _unit(rng.normal(size=(len(rows), 4)) + y[:, None])
    return rows, lex, cos, emb


def test_gate_study_fits_every_registry_signal_and_keeps_g3():
    rows, lex, cos, emb = _study_inputs()
    gate, run = section("gate", {"folds": 3}), make_run(0, ("ko", "en"))
    study = GateStudy(rows, ("bm25", lex), {"e5": cos}, {"e5": emb}, gate, run)
    assert list(study.signals) == list(registry("bm25", ["e5"]))
    assert not any(np.isnan(v).any() for v in study.signals.values())
    np.testing.assert_array_equal(study.signals["g3"], oof_scores(study.raw[list(FEATURES)].to_numpy(), study.y,
                                                                  study.folds))
    assert set(study.payloads) == {s.name for s in fitted(study.registry)}
    assert json.loads(study.payload) == study.payloads["g3"]
    auc = study.auc_frame().set_index("signal")
    assert "auc_mismatch_hard" in auc and auc.loc["g3_enc"].notna().all()
