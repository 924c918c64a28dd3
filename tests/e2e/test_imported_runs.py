"""End to end: imported sets through the whole workflow in a temporary copy (docs/new-catalog.md's two commands;
a BFCL sample with per-request candidates imported without route entries)."""
import json

import pandas as pd
import pytest

from conftest import copy_repo
from import_fixtures import NON_ROUTINE, doc_commands
from smk import job_counts, snakemake, toolgate

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return copy_repo(tmp_path_factory.mktemp("imported") / "repo")


def _run(repo, config: str):
    """Dry run (the main study only), then the whole workflow; the experiment's results folder."""
    assert not NON_ROUTINE & set(job_counts(snakemake("-n", "--configfile", config, cwd=repo).stdout))
    snakemake("--cores", "2", "--configfile", config, cwd=repo)
    exp = json.loads((repo / config).with_name("import.json").read_text())["experiment"]
    return repo / "results" / exp


def test_docs_two_commands_run_through(repo):
    imp, run = doc_commands()
    toolgate(*imp[1:], cwd=repo)
    snakemake(*run[1:], cwd=repo)
    res = repo / "results" / "smarthome"
    abl = pd.read_csv(res / "tables" / "candidate_ablation.csv")
    assert sorted(abl["k"].unique()) == [5, 10, 12]  # ablation.ks: auto on 12 actions
    report = (res / "report.md").read_text()
    assert "Scope: Candidates: the whole catalog." in report and "No match/mismatch split" in report
    assert "Mutating false positives: not available" in report


def test_bfcl_sample_without_routes_runs_with_per_request_candidates(repo, mirror):
    # one run for two cases: per-request candidate lists, and a catalog without route entries
    toolgate("import", "bfcl", str(mirror / "bfcl"), "--sample", "40", "--seed", "1", "--no-routes", "--out", "bfcl_run",
             cwd=repo)
    info = json.loads((repo / "bfcl_run" / "import.json").read_text())
    res = _run(repo, "bfcl_run/config.yaml")
    sel = pd.read_csv(res / "tables" / "selection.csv")
    assert (sel[(sel["lang"] == "all") & (sel["slice"] == "all")]["n"] == info["in_catalog"]).all()
    assert "Candidates: each request's own list (40 of 40 requests" in (res / "tables" / "selection.md").read_text()
    assert "each request's own list" in (res / "tables" / "gate_auc.md").read_text()
    routing = pd.read_csv(res / "tables" / "routing_baselines.csv")
    assert "standalone_bm25" not in routing.columns and "gated" in routing.columns
    routing = routing.set_index("metric")
    assert routing.loc["mutating_false_positive", "note"].startswith("not available")
    assert pd.isna(routing.loc["mutating_false_positive", "gated"])  # never a silent 0
    assert "Standalone baseline skipped" in (res / "tables" / "routing_baselines.md").read_text()
    assert "Route step skipped" in (res / "tables" / "pipelines.md").read_text()
    report = (res / "report.md").read_text()
    assert "no route entries" in report and (res / "router" / "P1" / "router.json").exists()
    assert not (repo / "results" / "cache" / "external").exists()  # nothing downloaded
