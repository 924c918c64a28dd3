"""End to end: docs/new-catalog.md's two commands through the whole workflow but the timing rules (timing: false) in
a temporary copy (per-request candidates and a catalog without route entries: tests/e2e/test_imported_tool_rows.py);
every import format's router exported with ``toolgate export --config`` and evaluated with ``decide --eval`` on the
files it came from."""
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import copy_repo
from import_fixtures import (
    FASTER,
    TIMED,
    beir_folder,
    bfcl_folder,
    doc_commands,
    functionchat_folder,
    pairs_files,
    ran,
)
from smk import UNTIMED, snakemake, toolgate
from toolgate.importers.build import NO_TOOLS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return copy_repo(tmp_path_factory.mktemp("imported") / "repo")


def exported_and_evaluated(repo, config: Path, *eval_args) -> dict:
    """``toolgate export --config`` of an imported experiment whose workflow has run, into a folder beside the
    import's (as a user ships it), then ``decide --eval`` of the files it was imported from: the card, and the
    counts it read agree with the import's."""
    router = config.parent.with_name(f"{config.parent.name}-router")
    toolgate("export", "--config", str(config), "--out", str(router), cwd=repo)
    card = json.loads(toolgate("decide", "--router", str(router), "--eval", *map(str, eval_args), "--json",
                               cwd=repo).stdout)
    info = json.loads((config.parent / "import.json").read_text())
    # a request offered no tools (--empty-candidates delegate) is evaluated, seeing no tool, but left out of the
    # import (the workflow's candidate lists are never empty): gold delegate, so out of catalog
    seeing_none = info["dropped"].get(NO_TOOLS, 0)
    assert (card["n"], card["n_in"], card["n_out"]) == (info["requests"] + seeing_none, info["in_catalog"],
                                                        info["out_of_catalog"] + seeing_none)
    assert card["refused"] == 0 and 0 <= card["accuracy"] <= 1
    return card


def test_docs_two_commands_run_through(repo):
    imp, run = doc_commands()
    toolgate(*imp[1:], cwd=repo)
    config = repo / run[run.index("--configfile") + 1]
    config.write_text(config.read_text() + FASTER)  # the numbers are not under test
    snakemake(*run[1:], *UNTIMED, cwd=repo)
    assert not TIMED & ran(repo, "smarthome")
    res = repo / "results" / "smarthome"
    abl = pd.read_csv(res / "tables" / "candidate_ablation.csv")
    assert sorted(abl["k"].unique()) == [5, 10, 12]  # ablation.ks: auto on 12 actions
    report = (res / "report.md").read_text()
    assert "Scope: Candidates: the whole catalog." in report and "No match/mismatch split" in report
    assert "Mutating false positives: not available" in report
    # the router ships from the written config, and reads the request file the import read
    card = exported_and_evaluated(repo, config, *imp[3:5], "--eval-format", imp[2])
    imported = json.loads(toolgate("decide", "--router", str(config.parent.with_name("smarthome-router")), "--eval",
                                   str(config.parent / "utterances.jsonl"), "--json", cwd=repo).stdout)
    named = {"set": card["set"], "references": [{**r, "set": card["set"]} for r in imported["references"]]}
    assert card == {**imported, **named}  # the importer's reading, decided alike (the references too)


@pytest.mark.parametrize("fmt, fixture, flags", [("bfcl", bfcl_folder, []), ("functionchat", functionchat_folder, []),
                                                 ("beir", beir_folder, ["--holdout-tools", "0.5", "--seed", "3"]),
                                                 ("pairs", pairs_files, ["--holdout-tools", "0.25"])])
def test_each_format_exports_from_its_config_and_evaluates_its_files(repo, tmp_path, fmt, fixture, flags):
    # the workflow up to the selected router, what an export reads (the whole workflow on imported sets: above and
    # tests/e2e/test_imported_tool_rows.py); the beir and pairs held-out tools are out of the router's catalog
    src, run = fixture(tmp_path), f"runs/{fmt}_import"
    src = [str(s) for s in (src if isinstance(src, tuple) else [src])]  # pairs: two files
    toolgate("import", fmt, *src, *flags, "--out", run, cwd=repo)
    config = repo / run / "config.yaml"
    cfg, faster = yaml.safe_load(config.read_text()), yaml.safe_load(FASTER)
    config.write_text(yaml.safe_dump({**cfg, **faster, "gate": {**cfg.get("gate", {}), **faster["gate"]}}))
    snakemake(f"results/{fmt}_import/router/selected/router.json", "--configfile", f"{run}/config.yaml", "--cores",
              "2", *UNTIMED, cwd=repo)
    exported_and_evaluated(repo, config, *src, "--eval-format", fmt)
