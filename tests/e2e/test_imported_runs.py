"""End to end: docs/new-catalog.md's two commands through the whole workflow in a temporary copy (per-request
candidates and a catalog without route entries: tests/e2e/test_imported_tool_rows.py)."""
import pandas as pd
import pytest

from conftest import copy_repo
from import_fixtures import FASTER, doc_commands
from smk import UNTIMED, snakemake, toolgate

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return copy_repo(tmp_path_factory.mktemp("imported") / "repo")


def test_docs_two_commands_run_through(repo):
    imp, run = doc_commands()
    toolgate(*imp[1:], cwd=repo)
    config = repo / run[run.index("--configfile") + 1]
    config.write_text(config.read_text() + FASTER)  # the numbers are not under test
    snakemake(*run[1:], *UNTIMED, cwd=repo)
    res = repo / "results" / "smarthome"
    abl = pd.read_csv(res / "tables" / "candidate_ablation.csv")
    assert sorted(abl["k"].unique()) == [5, 10, 12]  # ablation.ks: auto on 12 actions
    report = (res / "report.md").read_text()
    assert "Scope: Candidates: the whole catalog." in report and "No match/mismatch split" in report
    assert "Mutating false positives: not available" in report
