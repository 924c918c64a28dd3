"""End to end: the smoke config through the whole workflow in a temporary copy."""
import json

import pandas as pd

import pytest

from conftest import copy_repo
from smk import snakemake
from toolgate.signals import registry

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    dst = copy_repo(tmp_path_factory.mktemp("e2e") / "repo")
    snakemake("--cores", "2", "--configfile", "config/smoke.yaml", cwd=dst)
    return dst


def test_outputs_exist_and_are_consistent(smoke_run):
    res = smoke_run / "results" / "smoke"
    ok = json.loads((res / "inputs_ok.json").read_text())
    assert ok["utterances"] == 2 * (70 + 6 + 4 + 2 + 6)  # 6 mismatch_hard pairs beside the main set
    assert ok["by_gold_outcome"]["ask"] == 8
    for f in ("data_card.md", "tables/composition.csv", "tables/jaccard.csv", "data/utterances.meta.json",
              "tables/selection.md", "tables/rerank.md", "tables/cost.md", "tables/quant_retention.md"):
        assert (res / f).stat().st_size > 0
    sel = pd.read_csv(res / "tables/selection.csv")
    assert set(sel["ranker"]) == {"bm25", "e5", "usem3"}
    assert set(sel["slice"]) == {"match", "mismatch", "mismatch_hard", "all"} and set(sel["lang"]) == {"ko", "en", "all"}
    assert (sel[(sel["slice"] == "all") & (sel["lang"] == "all")]["n"] == 140).all()  # the main set only
    auc = pd.read_csv(res / "tables/gate_auc.csv")
    assert list(auc["signal"]) == list(registry("bm25", ["e5", "usem3"]))  # the paper's signals, then v2's
    assert auc.set_index("signal")[["auc_overall", "auc_mismatch_hard"]].notna().all().all()
    assert {"auc_mismatch_hard", "auc_mismatch_length_matched"} <= set(auc.columns)
    comp = pd.read_csv(res / "tables/gate_comparison.csv")
    assert set(comp["slice"]) == {"overall", "match", "mismatch", "mismatch_hard", "mismatch_length_matched"}
    cov = comp.query("cluster_unit == 'utterance' and slice == 'overall' and measure == 'best_coverage'")
    ops = pd.read_csv(res / "tables/operating_points.csv").set_index("gate")["best_coverage"]
    for g in ("g3", "e5_maxcos", "usem3_maxcos"):  # the comparison's coverage is operating_points' own
        assert abs(cov.set_index("gate").loc[g, "value"] - ops[g]) < 1e-4
    transfer = pd.read_csv(res / "tables/gate_transfer.csv").set_index("gate")
    assert set(transfer["set"]) == {"smoke"} and transfer.loc["g3_enc", "mode"] == "within"  # no external study
    assert abs(transfer.loc["g3", "auc"] - auc.set_index("signal").loc["g3", "auc_overall"]) < 1e-4
    overlap = pd.read_csv(res / "tables/gate_by_overlap.csv")
    assert {"auc", "auc difference", "top1"} == set(overlap["measure"]) and overlap["n_in"].sum() > 0
    assert json.loads((res / "data_check.json").read_text()) == {"checks": [], "enabled": False}
    boot = pd.read_csv(res / "tables/bootstrap.csv")
    assert len(boot) == 12 and set(boot["cluster_unit"]) == {"utterance", "pair"}
    for fig in ("fig2_operating_points", "fig3_reliability", "fig_gate_by_overlap", "fig_gate_transfer"):
        for ext in ("png", "pdf"):
            assert (smoke_run / "figures" / "smoke" / f"{fig}.{ext}").stat().st_size > 10_000
    pipes, base = pd.read_csv(res / "tables/pipelines.csv"), pd.read_csv(res / "tables/routing_baselines.csv")
    ladder = base.set_index("metric").loc["accuracy", "single_pool_ladder"]
    assert (pipes["ladder_accuracy"] - ladder).abs().max() < 1e-4  # the guard's ladder is routing_baselines' own
    assert ((pipes["accuracy"] - pipes["ladder_accuracy"] - pipes["accuracy_minus_ladder"]).abs() < 2e-4).all()
    assert (pipes["ci_low"] <= pipes["accuracy_minus_ladder"] + 1e-4).all()
    assert (pipes["accuracy_minus_ladder"] <= pipes["ci_high"] + 1e-4).all()
    cost = pd.read_csv(res / "tables/cost.csv")
    assert set(cost["implementation"]) == {"toolgate", "rank_bm25", "bm25s"}
    assert (smoke_run / "logs" / "smoke" / "generate_utterances.log").exists()


def test_rerun_has_nothing_to_do(smoke_run):
    proc = snakemake("-n", "--configfile", "config/smoke.yaml", cwd=smoke_run)
    assert "Nothing to be done" in proc.stdout + proc.stderr
