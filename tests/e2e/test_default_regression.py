"""The complete default workflow in the checkout, then the headline regression check.

This is what `make reproduce` runs; a rerun after it has nothing to do. The
`check` rule is part of the default target (config.yaml sets report.expected),
so a drift in any headline number fails this test with the check's diff.
"""
import pytest

from conftest import ROOT
from smk import snakemake

pytestmark = pytest.mark.slow


def test_default_workflow_and_check(tmp_path):
    proc = snakemake("--cores", "2", cwd=ROOT, check=False)
    log = (ROOT / "logs" / "default" / "check.log")
    assert proc.returncode == 0, (log.read_text() if log.exists() else "") + proc.stderr[-4000:]
    res = ROOT / "results" / "default"
    assert "0 differ" in (res / "check.txt").read_text()
    html = (res / "report.html").read_text()
    assert "Claims ledger" in html and "data:image/png;base64," in html and "http" not in html.split("<body>")[1][:200]
    assert "Nothing to be done" in snakemake("-n", cwd=ROOT).stdout
    snakemake("--report", str(tmp_path / "report.zip"), cwd=ROOT)
    assert (tmp_path / "report.zip").stat().st_size > 100_000
