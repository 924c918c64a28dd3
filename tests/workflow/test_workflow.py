from pathlib import Path

import pytest

from smk import snakemake

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


def test_invalid_config_names_key(repo_copy):
    bad = repo_copy / "bad.yaml"
    bad.write_text("experiment: bad\ntext:\n  ngram: 0\n")
    proc = snakemake("-n", "--configfile", "bad.yaml", cwd=repo_copy, check=False)
    assert proc.returncode != 0
    assert "field 'text.ngram'" in proc.stdout + proc.stderr


def test_two_experiments_never_share_outputs(repo_copy):
    a = snakemake("-n", "--configfile", "config.yaml", cwd=repo_copy).stdout
    b = snakemake("-n", "--configfile", "config/smoke.yaml", cwd=repo_copy).stdout
    assert "results/default/" in a and "results/smoke/" not in a
    assert "results/smoke/" in b and "results/default/" not in b
