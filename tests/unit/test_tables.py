"""Markdown tables: a cell's text never breaks its row."""
import re

import numpy as np
import pandas as pd

from toolgate.tables import to_markdown

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
