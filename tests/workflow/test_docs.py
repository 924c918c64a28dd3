"""docs/new-catalog.md's two commands, run as written on the shipped example (the workflow as a dry run here;
tests/e2e/test_imported_runs.py runs it whole)."""
from import_fixtures import NON_ROUTINE, doc_commands
from smk import job_counts, snakemake, toolgate


def test_new_catalog_doc_is_two_commands():
    (imp, run) = doc_commands()
    assert imp[:2] == ["toolgate", "import"] and "--out" in imp
    assert run[0] == "snakemake" and run[run.index("--configfile") + 1] == f"{imp[imp.index('--out') + 1]}/config.yaml"


def test_new_catalog_doc_commands_run(repo_copy):
    imp, run = doc_commands()
    printed = toolgate(*imp[1:], cwd=repo_copy).stdout
    assert "12 actions, 3 routes" in printed and "63 rows" in printed
    dry = snakemake(*run[1:], "-n", cwd=repo_copy).stdout
    jobs = job_counts(dry)
    assert {"scores", "selection", "gate_auc", "routing_baselines", "pipelines", "report"} <= set(jobs)
    assert not NON_ROUTINE & set(jobs)  # the main study only: nothing downloaded, no ONNX export, no vLLM
    assert "results/smarthome/report.md" in dry
