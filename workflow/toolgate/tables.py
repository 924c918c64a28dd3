"""Writing result tables: CSV for machines, Markdown beside it for people."""
from __future__ import annotations

import platform

import numpy as np
import pandas as pd

from . import __version__
from .core import io


def _cell(text: str) -> str:
    """A table cell that cannot end its row early: ``|`` escaped, line breaks as spaces."""
    return " ".join(text.replace("|", "\\|").splitlines())


MAX_NOTE = 300  # a table's note says what it is and its caveat; the definitions live in docs/metrics.md


def to_markdown(df: pd.DataFrame, floatfmt: str = ".3f") -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(_cell(str(c)) for c in cols) + " |", "|" + "---|" * len(cols)]
    for rec in df.itertuples(index=False):
        cells = ["" if v is None or (isinstance(v, float) and np.isnan(v)) else
                 format(v, floatfmt) if isinstance(v, (float, np.floating)) else _cell(str(v)) for v in rec]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def provenance(seed=None) -> str:
    return f"toolgate {__version__}, numpy {np.__version__}, pandas {pd.__version__}, python {platform.python_version()}" + (
        f", seed {seed}" if seed is not None else "")


def paper_note(prefixes) -> str:
    """Where a table's paper values live: key prefixes of data/paper/reported.yaml (report.md shows them side by side)."""
    keys = ", ".join(f"`{p}*`" for p in prefixes)
    return f"Paper values: {keys} in data/paper/reported.yaml." if prefixes else ""


def write_table(df: pd.DataFrame, csv_path, title: str = "", note: str = "", seed=None, paper=()) -> None:
    """``csv_path`` (4-decimal floats) and ``csv_path`` with ``.md``: title, note, table, provenance.

    ``paper``: prefixes of the reported.yaml keys this table reproduces; the note cites them, never the numbers.
    """
    note = " ".join(x for x in (note, paper_note(paper)) if x)
    if len(note) > MAX_NOTE:
        raise ValueError(f"{csv_path}: the table's note has {len(note)} characters, over {MAX_NOTE} (the rest belongs "
                         f"in docs/metrics.md): {note[:60]}...")
    io.write_atomic(csv_path, df.to_csv(index=False, float_format="%.4f", lineterminator="\n"))
    md = [f"# {title}" if title else "", "", note, "", to_markdown(df), "", f"_{provenance(seed)}_", ""]
    io.write_atomic(str(csv_path)[:-4] + ".md" if str(csv_path).endswith(".csv") else f"{csv_path}.md",
                    "\n".join(x for x in md if x is not None))
