"""Markdown tables: a cell's text never breaks its row; a note over ``MAX_NOTE`` characters is refused."""
import ast
import re

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from toolgate.tables import MAX_NOTE, paper_note, to_markdown, write_table

UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list[str]:
    """A Markdown row's cells as a GFM reader splits them, with ``\\|`` read back as ``|``."""
    return [c.strip().replace("\\|", "|") for c in UNESCAPED_PIPE.split(line)[1:-1]]


def test_pipes_and_line_breaks_stay_inside_their_cell():
    df = pd.DataFrame({"claim": ["calibration", "plain"], "test": ["G3 Platt |d auc_mismatch| <= 0.01", "x"],
                       "a|b": ["two\nlines", "y"], "value": [0.5, np.nan]})
    lines = to_markdown(df).splitlines()
    assert [len(_cells(line)) for line in lines] == [4, 4, 4, 4]
    assert _cells(lines[0])[2] == "a|b"
    assert _cells(lines[2]) == ["calibration", "G3 Platt |d auc_mismatch| <= 0.01", "two lines", "0.500"]
    assert _cells(lines[3]) == ["plain", "x", "y", ""]


def test_a_note_over_the_limit_is_refused_before_anything_is_written(tmp_path):
    df, out = pd.DataFrame({"a": [1]}), tmp_path / "t.csv"
    write_table(df, out, "T", "x" * (MAX_NOTE - len(paper_note(("gate.",))) - 1), paper=("gate.",))
    assert len((tmp_path / "t.md").read_text().splitlines()[2]) == MAX_NOTE
    with pytest.raises(ValueError, match=f"t2.csv: the table's note has {MAX_NOTE + 1} characters, over {MAX_NOTE}"):
        write_table(df, tmp_path / "t2.csv", "T", "x" * (MAX_NOTE - len(paper_note(("gate.",)))), paper=("gate.",))
    assert not (tmp_path / "t2.csv").exists() and not (tmp_path / "t2.md").exists()


def test_every_section_a_note_points_to_is_in_docs_metrics():
    headings = [line[3:] for line in (ROOT / "docs/metrics.md").read_text().splitlines() if line.startswith("## ")]
    strings = [(path.name, node.value) for path in (ROOT / "workflow/toolgate").rglob("*.py")
               for node in ast.walk(ast.parse(path.read_text())) if isinstance(getattr(node, "value", None), str)]
    cited = {(name, m) for name, text in strings for m in re.findall(r"docs/metrics\.md, '([^']+)'", text)}
    assert len(cited) >= 20
    assert [c for c in cited if not any(h.startswith(c[1]) for h in headings)] == []
