"""Are two runs' tables the same? Byte for byte, except the columns that time things.

A refactor must leave every table byte-identical (same config and seed); timings differ from run to run, so
columns that hold seconds, milliseconds, throughput, memory or a ratio of timings are compared by presence only.
The Markdown twins are skipped with their CSVs' timing columns in them; the CSVs carry every value.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from .core.errors import InputError
from .core.io import read_text

TIMING = re.compile(r"(_ms|_s|_qps|_mb|_goal_met)$|^(median_ratio_to_ours|ours_over_\w+)$")


def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(read_text(path))))
    return (rows[0], rows[1:]) if rows else ([], [])


def table_differences(a_dir, b_dir) -> list[str]:
    """One line per table that differs (or exists on one side only); empty when every CSV is the same.
    InputError when a folder is missing or neither holds a table (nothing compared is no evidence of sameness)."""
    a_dir, b_dir = Path(a_dir), Path(b_dir)
    for d in (a_dir, b_dir):
        if not d.is_dir():
            raise InputError(d, "not a folder" if d.exists() else "no such folder")
    names = sorted({p.name for p in a_dir.glob("*.csv")} | {p.name for p in b_dir.glob("*.csv")})
    if not names:
        raise InputError(a_dir, f"no tables (*.csv) here or in {b_dir}")
    out = []
    for name in names:
        a, b = a_dir / name, b_dir / name
        if not (a.exists() and b.exists()):
            out.append(f"{name}: only in {a_dir if a.exists() else b_dir}")
            continue
        if a.read_bytes() == b.read_bytes():
            continue
        (head_a, rows_a), (head_b, rows_b) = _rows(a), _rows(b)
        if head_a != head_b or len(rows_a) != len(rows_b):
            out.append(f"{name}: columns or row count differ")
            continue
        keep = [i for i, c in enumerate(head_a) if not TIMING.search(c)]
        bad = [k for k, (x, y) in enumerate(zip(rows_a, rows_b)) if [x[i] for i in keep] != [y[i] for i in keep]]
        if bad:
            cols = [head_a[i] for i in keep if rows_a[bad[0]][i] != rows_b[bad[0]][i]]
            out.append(f"{name}: {len(bad)} rows differ outside the timing columns (first: row {bad[0] + 1}, "
                       f"{', '.join(cols)})")
        elif len(keep) == len(head_a):  # no timing column: the bytes differ where no value does
            out.append(f"{name}: the same values in other bytes (line endings, quoting or a BOM)")
    return out
