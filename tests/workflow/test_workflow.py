import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from import_fixtures import NON_ROUTINE, TIMED, bfcl_folder
from smk import job_counts, snakemake, toolgate

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted(p.relative_to(ROOT) for p in (ROOT / "config").glob("*.yaml"))


def test_lint_clean(repo_copy):
    proc = snakemake("--lint", cwd=repo_copy, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Lints for" not in out, out


@pytest.mark.parametrize("cfg", [Path("config.yaml"), *CONFIGS], ids=str)
def test_dry_run(repo_copy, cfg):
    proc = snakemake("-n", "--configfile", str(cfg), cwd=repo_copy)
    assert "rule all" in proc.stdout or "Nothing to be done" in proc.stdout


@pytest.mark.parametrize("body,message", [
    ("experiment: bad\ntext:\n  ngram: 0\n", "field 'text.ngram'"),
    ("experiment: ..\n", "field 'experiment'"),  # its outputs landed in the checkout root
    ("experiment: bad\ncatalog: data\n", "field 'catalog': 'data' is a folder"),  # failed inside a job
], ids=["ngram", "dotdot", "catalog-folder"])
def test_invalid_config_names_file_and_key(repo_copy, body, message):
    (repo_copy / "bad.yaml").write_text(body)
    proc = snakemake("-n", "--configfile", "bad.yaml", cwd=repo_copy, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2 and f"bad.yaml: {message}" in out and "Job stats" not in out
    assert "Traceback" not in out and "common.smk" not in out  # the error alone, as the command line gives it


def test_two_experiments_never_share_outputs(repo_copy):
    a = snakemake("-n", "--configfile", "config.yaml", cwd=repo_copy).stdout
    b = snakemake("-n", "--configfile", "config/smoke.yaml", cwd=repo_copy).stdout
    assert "results/default/" in a and "results/smoke/" not in a
    assert "results/smoke/" in b and "results/default/" not in b


def test_imported_set_with_candidates_runs_the_main_study_only(repo_copy):
    out = repo_copy / "bfcl_run"
    toolgate("import", "bfcl", str(bfcl_folder(repo_copy / "src")), "--out", "bfcl_run", cwd=repo_copy)
    written = yaml.safe_load((out / "config.yaml").read_text())
    assert (written["catalog"], written["relative_to"]) == ("catalog.jsonl", "config")  # resolved from the project root
    jobs = job_counts(snakemake("-n", "--configfile", "bfcl_run/config.yaml", cwd=repo_copy).stdout)
    assert jobs["scores"] == 3 and jobs["candidate_ablation"] == 1 and not NON_ROUTINE & set(jobs)


def test_catalog_without_routes_is_scheduled(repo_copy):
    toolgate("import", "bfcl", str(bfcl_folder(repo_copy / "src")), "--out", "bare", "--no-routes", cwd=repo_copy)
    jobs = job_counts(snakemake("-n", "--configfile", "bare/config.yaml", cwd=repo_copy).stdout)
    assert jobs["routing_baselines"] == 1 and jobs["export_router"] == 1


def test_oversized_k_fails_at_validation_naming_the_key(repo_copy):
    (repo_copy / "big_k.yaml").write_text("experiment: big_k\nablation:\n  ks: [7, 100]\n")
    proc = snakemake("-n", "--configfile", "big_k.yaml", cwd=repo_copy, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "field 'ablation.ks': k=100 is above the catalog's 70 actions" in out
    assert "Job stats" not in out


@pytest.mark.parametrize("body,message", [
    ("utterances:\n  templates: data/templates/nope\n",
     "field 'utterances.templates': no template bank files (*.yaml) in 'data/templates/nope'"),
    ("gate:\n  folds: 100\n", "field 'gate.folds': 100 folds need at least as many out-of-catalog request groups "
                               "(pair_id); utterances.composition has 90"),
], ids=["templates", "folds"])
def test_a_generated_set_fails_at_validation_naming_the_key(repo_copy, body, message):
    (repo_copy / "bad.yaml").write_text(f"experiment: bad\n{body}")
    proc = snakemake("-n", "--configfile", "bad.yaml", cwd=repo_copy, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and message in out and "IndexError" not in out and "Job stats" not in out


def test_every_rule_has_a_log_and_a_benchmark():
    # `toolgate profile` reads the benchmark files: a rule without one is missing from the per-rule wall times
    text = "\n".join(p.read_text() for p in sorted((ROOT / "workflow" / "rules").glob("*.smk")))
    rules = text.split("\nrule ")[1:]
    missing = [b.split(":")[0] for b in rules if "benchmark:" not in b or "log:" not in b]
    assert rules and not missing, missing


def test_every_path_is_written_once():
    # a file two rules name is common.smk's PATHS entry: two literals of it could drift apart and split the DAG
    text = "\n".join(p.read_text() for p in sorted((ROOT / "workflow" / "rules").glob("*.smk")))
    literals = re.findall(r'f"\{(?:RES|FIG|LOGS)\}/[^"]*"', text)
    twice = sorted(p for p, n in Counter(literals).items() if n > 1)
    assert literals and not twice, twice


BENCH_JOBS = {"scaling", "fig_scaling", "tokenizer_ablation", "fig_tokenizer_ablation"}


def test_benchmarks_beyond_the_paper_run_with_make_bench_only(repo_copy):
    # `make reproduce`: the paper's tables and figures, its cost table and the routers' cost; `make bench` adds the
    # scaling benchmark and the tokenizer ablation (config.yaml's bench: false, the Makefile's --config bench=True)
    plain = job_counts(snakemake("-n", "--configfile", "config.yaml", cwd=repo_copy).stdout)
    bench = job_counts(snakemake("-n", "--configfile", "config.yaml", "--config", "bench=True", cwd=repo_copy).stdout)
    assert not BENCH_JOBS & set(plain) and {"cost", "router_cost", "pipelines", "pipeline_cost", "external"} <= set(plain)
    assert {j: bench[j] for j in BENCH_JOBS} == dict.fromkeys(BENCH_JOBS, 1)
    assert {j: n for j, n in bench.items() if j not in BENCH_JOBS} == plain
    assert "bench=True" in (ROOT / "Makefile").read_text()


def test_timing_off_leaves_out_the_timing_rules_only(repo_copy):
    # the suite's imported runs (import_fixtures.FASTER): every other job of the run, the report among them, stays
    plain = job_counts(snakemake("-n", "--configfile", "config.yaml", cwd=repo_copy).stdout)
    off = job_counts(snakemake("-n", "--configfile", "config.yaml", "--config", "timing=False", cwd=repo_copy).stdout)
    assert {j: n for j, n in plain.items() if j not in TIMED} == off and TIMED <= set(plain)
