"""Run snakemake (and the toolgate command) from the test interpreter's environment."""
import os
import subprocess
import sys
from pathlib import Path

SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
# The timed rules hold every core (`threads: 256`). The suite's workflow runs measure nothing, so every rule gets one
# thread and the timed ones run beside the other jobs: with two test workers there are more processes than cores,
# and an encoder's two OpenMP threads then stall each other (one e5 query took 1.6 s instead of 15 ms in CI).
UNTIMED = ("--max-threads", "1")


def snakemake(*args, cwd, check=True):
    proc = subprocess.run([SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def toolgate(*args, cwd, check=True):
    """The ``toolgate`` command of the test interpreter's environment, importing the package from ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(Path(cwd) / "workflow")}
    proc = subprocess.run([str(Path(sys.executable).parent / "toolgate"), *args], cwd=cwd, capture_output=True,
                          text=True, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"toolgate {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def job_counts(dry_run_stdout: str) -> dict[str, int]:
    """Rule name -> job count, from the 'Job stats' table of a dry run."""
    counts, table = {}, dry_run_stdout.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    for line in table.splitlines()[3:]:
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
            counts[parts[0]] = int(parts[1])
    return counts
