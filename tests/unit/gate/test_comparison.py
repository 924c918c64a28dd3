"""Each gate against G3 and the best encoder."""

import numpy as np
import pandas as pd
import pytest

from toolgate.config import run as make_run
from toolgate.config import section
from toolgate.core.scores import route_step, top_actions
from toolgate.gate.comparison import comparison_frame, verdict
from toolgate.gate.operating import best_within, sweep
from toolgate.gate.study import GateStudy

from .test_study import _study_inputs


def test_verdict_reads_the_measure_direction():
    assert verdict((0.01, 0.2), True) == "better" and verdict((0.01, 0.2), False) == "worse"
    assert verdict((-0.1, 0.2), True) == "within" and verdict((np.nan, np.nan), True) == ""


# ----------------------------------------------------------------------------------------------- the study


def test_comparison_on_overall_matches_operating_points():
    rows, lex, cos, emb = _study_inputs()
    gate, run = section("gate", {"folds": 3, "resamples": 50}), make_run(0, ("ko", "en"))
    study = GateStudy(rows, ("bm25", lex), {"e5": cos}, {"e5": emb}, gate, run)
    signals = pd.DataFrame({"utterance_id": [r["utterance_id"] for r in rows], "pair_id": study.groups,
                            "slice": [r["slice"] for r in rows], "in_catalog": study.y, **study.signals})
    table = comparison_frame(rows, lex, signals, study.registry, gate, run)
    assert set(table["slice"]) == set(study.masks) and set(table["cluster_unit"]) == {"utterance", "pair"}
    main = [r for r in rows if r["slice"] != "mismatch_hard"]
    sw = sweep(signals.set_index("utterance_id").loc[[r["utterance_id"] for r in main], "g3"].to_numpy(), main,
               top_actions(lex, main)[:, 0], route_step(lex, main))
    row = table.query("cluster_unit == 'utterance' and slice == 'overall' and measure == 'best_coverage' "
                      "and gate == 'g3'").iloc[0]
    assert row["value"] == pytest.approx(best_within(sw, gate.danger_budget)["coverage"])
    assert np.isnan(row["minus_g3"]) and row["best_encoder"] == "e5_maxcos"
    fpr = table[table["measure"] == "fpr_at_95tpr"]
    assert ((fpr["minus_best_ci_low"] <= fpr["minus_best"] + 1e-9) | fpr["minus_best"].isna()).all()


def test_comparison_skips_slices_with_nothing_to_separate():
    rows, lex, cos, emb = _study_inputs()
    rows = [r | {"slice": "match"} if r["slice"] == "mismatch" else r for r in rows]  # no mismatch-in items
    gate, run = section("gate", {"folds": 3, "resamples": 20, "cluster_units": ["pair"]}), make_run(0, ("ko", "en"))
    study = GateStudy(rows, ("bm25", lex), {"e5": cos}, {"e5": emb}, gate, run)
    signals = pd.DataFrame({"utterance_id": [r["utterance_id"] for r in rows], "pair_id": study.groups,
                            "slice": [r["slice"] for r in rows], "in_catalog": study.y, **study.signals})
    table = comparison_frame(rows, lex, signals, study.registry, gate, run)
    assert set(table["slice"]) == {"overall", "match", "mismatch_hard"} and table["value"].notna().all()


# ----------------------------------------------------------------------------------------------- transfer
