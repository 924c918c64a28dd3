"""A one-table results folder shared by the report tests."""
import pandas as pd
import pytest

from toolgate.config import section

ROLES = section("roles")


@pytest.fixture
def tables_dir(tmp_path):
    d = tmp_path / "tables"
    d.mkdir()
    pd.DataFrame({"ranker": ["bm25", "e5"], "lang": ["all", "all"], "slice": ["match", "match"], "top1": [0.98, 0.91]}) \
        .to_csv(d / "selection.csv", index=False)
    return d
