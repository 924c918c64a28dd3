"""End to end: tool-rows files written for the tests (labelled rows in English and Korean; rows in BFCL live's shape)
imported with one command each and run with the command the importer prints, the labelled rows through the whole
workflow but the timing rules (timing: false), the BFCL-shaped rows up to the selected router and the routing
tables; the written config runs from the project root and from the import folder, wherever that folder is. The
BFCL-shaped run also covers a catalog without route entries (tests/e2e/test_imported_runs.py runs the docs' example).
Each router is exported from the written config and evaluated on the rows it was imported from, read with the same
flags."""
import json
import os
import subprocess
import sys

import pandas as pd
import pytest
from test_imported_runs import exported_and_evaluated

from conftest import copy_repo
from import_fixtures import FASTER, NON_ROUTINE, TIMED, ran
from smk import UNTIMED, job_counts, snakemake
from tool_rows_fixtures import bfcl_live_rows, labelled_rows
from toolgate.core.scores import ROUTE_NOTE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """(a folder outside the project, the project copy inside it)."""
    root = tmp_path_factory.mktemp("tool_rows")
    return root, copy_repo(root / "repo")


def _import(repo, cwd, *args) -> list[str]:
    """``toolgate import tool-rows ...`` run in ``cwd`` with the copy's package; the run command it prints."""
    env = {**os.environ, "PYTHONPATH": str(repo / "workflow")}
    proc = subprocess.run([sys.executable, "-m", "toolgate.cli", "import", "tool-rows", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.rsplit("run from the project root: ", 1)[1].split()


def _run(repo, folder, command: list[str], *targets: str) -> dict:
    """The printed command, run from the project root up to ``targets`` (none: the whole workflow) without the timing
    rules (and bootstrap resamples cut: the numbers are not under test); then, from the import folder, a dry
    run naming the project finds nothing left to do."""
    config = folder / "config.yaml"
    assert not {"gate:", "timing:"} & set(config.read_text().split())  # the appended settings replace no written one
    config.write_text(config.read_text() + FASTER)
    assert command[:2] == ["snakemake", "--configfile"] and (repo / command[2]).resolve() == config.resolve()
    assert not NON_ROUTINE & set(job_counts(snakemake("-n", *command[1:], cwd=repo).stdout))
    # the targets first: --configfile takes every word up to the next option
    snakemake(*targets, *command[1:], *UNTIMED, cwd=repo)
    again = snakemake("-n", *targets, "-s", str(repo / "Snakefile"), "-d", str(repo), "--configfile", "config.yaml",
                      cwd=folder)
    assert "Nothing to be done" in again.stdout + again.stderr
    return json.loads((folder / "import.json").read_text())


def _selection(repo, info):
    res = repo / "results" / info["experiment"]
    sel = pd.read_csv(res / "tables" / "selection.csv")
    assert (res / "report.md").is_file() and (res / "router" / "P1" / "router.json").is_file()
    return res, sel[sel["slice"] == "all"].groupby(["ranker", "lang"])["n"].first()


def test_labelled_rows_imported_from_outside_the_project_run_through(place):
    root, repo = place
    reading = ["--preset", "labelled", "--empty-candidates", "catalog"]
    command = _import(repo, root, labelled_rows(root / "src"), *reading, "--out", "repo/runs/rows")
    assert command == ["snakemake", "--configfile", "runs/rows/config.yaml", "--cores", "2"]
    info = _run(repo, repo / "runs" / "rows", command)
    assert not TIMED & ran(repo, info["experiment"])
    res, n = _selection(repo, info)
    assert n["bm25", "all"] == info["in_catalog"] == 19 and (n["bm25", "ko"], n["bm25", "en"]) == (4, 15)
    assert "Candidates: each request's own list (25 of 26," in (res / "tables" / "selection.md").read_text()
    # the label is the out-of-catalog subtype each gate is measured against
    assert set(pd.read_csv(res / "tables" / "gate_by_subtype.csv")["out_subtype"]) == {"cannot_answer"}
    # English tool texts, Korean requests: the import and the data card say what the lexical ranker will miss
    warning, = info["language_warnings"]  # none for English
    assert warning.startswith("5 of 26 requests are in ko, but only 0 of the catalog's 8 actions have a ko name")
    assert warning in (res / "data_card.md").read_text()
    exported_and_evaluated(repo, repo / "runs" / "rows" / "config.yaml", root / "src" / "labelled.jsonl",
                           "--eval-format", "tool-rows", *reading)


def test_bfcl_live_rows_without_routes_in_a_folder_outside_the_project_run_through(place):
    # one run for three cases: rows in BFCL live's shape, a folder outside the project, no route entries; up to the
    # selected router (what an export reads) and the two routing tables that handle a catalog without routes
    root, repo = place
    reading = ["--preset", "bfcl-live", "--empty-candidates", "delegate"]
    src = bfcl_live_rows(root / "src")
    command = _import(repo, repo, src, *reading, "--no-routes", "--out", root / "elsewhere" / "live")
    assert command[2] == "../elsewhere/live/config.yaml"
    info = _run(repo, root / "elsewhere" / "live", command, "results/live/router/selected/router.json",
                "results/live/tables/routing_baselines.csv", "results/live/tables/pipelines.csv")
    res = repo / "results" / info["experiment"]
    assert not TIMED & ran(repo, info["experiment"])
    # the gate study's requests: the empty row left out
    in_catalog = pd.read_csv(res / "gate" / "signals.csv")["in_catalog"].value_counts()
    assert in_catalog[1] == info["in_catalog"] == 12 and in_catalog[0] == info["out_of_catalog"] == 7
    assert "Candidates: each request's own list (19 of 19," in (res / "tables" / "gate_auc.md").read_text()
    assert not list((root / "elsewhere" / "live").glob("results"))  # outputs go to the project, not the folder
    assert json.loads((res / "router" / "selected" / "router.json").read_text())["catalog"]["routes"] == []
    routing = pd.read_csv(res / "tables" / "routing_baselines.csv")
    assert "standalone_bm25" not in routing.columns and "gated" in routing.columns
    routing = routing.set_index("metric")
    assert routing.loc["mutating_false_positive", "note"].startswith("not available")
    assert pd.isna(routing.loc["mutating_false_positive", "gated"])  # never a silent 0
    assert "No standalone column. " + ROUTE_NOTE in (res / "tables" / "routing_baselines.md").read_text()
    assert ROUTE_NOTE in (res / "tables" / "pipelines.md").read_text()
    assert not (repo / "results" / "cache" / "external").exists()  # nothing downloaded
    exported_and_evaluated(repo, root / "elsewhere" / "live" / "config.yaml", src, "--eval-format", "tool-rows",
                           *reading)
