"""`make unlock`, which `make reproduce` runs first: the lock of a run killed hard is removed unless a Snakemake
process runs in this checkout. A run in another checkout kept it too, when the check was machine-wide."""
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT


def _checkout(tmp_path: Path) -> Path:
    """A checkout holding the Makefile and a dead run's lock; its `snakemake` records that it was called."""
    here = tmp_path / "checkout"
    (here / ".snakemake" / "locks").mkdir(parents=True)
    (here / ".snakemake" / "locks" / "0.input.lock").write_text("")
    shutil.copy(ROOT / "Makefile", here / "Makefile")
    fake = here / "venv" / "bin" / "snakemake"
    fake.parent.mkdir(parents=True)
    fake.write_text('#!/bin/sh\necho "$@" > called\n')
    fake.chmod(0o755)
    return here


@pytest.mark.skipif(not (Path("/proc/self/cwd").exists() and shutil.which("make") and shutil.which("pgrep")),
                    reason="needs make, pgrep and /proc")
@pytest.mark.parametrize("in_this_checkout", [False, True], ids=["run-elsewhere", "run-here"])
def test_the_lock_is_kept_only_while_snakemake_runs_in_this_checkout(tmp_path, in_this_checkout):
    here = _checkout(tmp_path)
    script = tmp_path / "other" / "bin" / "snakemake"  # its command line names bin/snakemake, as a run's does
    script.parent.mkdir(parents=True)
    script.write_text("sleep 60\n")
    running = subprocess.Popen(["/bin/sh", str(script)], cwd=here if in_this_checkout else script.parent)
    try:
        out = subprocess.run(["make", "-s", "unlock", "VENV=venv"], cwd=here, capture_output=True, text=True,
                             timeout=60)
    finally:
        running.kill()
        running.wait()
    assert out.returncode == 0, out.stderr
    if in_this_checkout:
        assert not (here / "called").exists() and out.stdout == ""
    else:
        assert (here / "called").read_text() == "--unlock --configfile config.yaml\n"
        assert "removing the lock of an interrupted run" in out.stdout
