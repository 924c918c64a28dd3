"""Run snakemake from the test interpreter's environment."""
import subprocess
import sys
from pathlib import Path

SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


def snakemake(*args, cwd, check=True):
    proc = subprocess.run([SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc
