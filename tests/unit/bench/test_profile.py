"""The per-rule profile reads Snakemake benchmark files, slowest first."""
import pytest

from toolgate.bench.profile import profile_frame, profile_text
from toolgate.core.errors import InputError

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def test_slowest_first_with_shares(tmp_path):
    for name, s, rss in (("selection", 2.0, 150.0), ("pipelines", 6.0, 400.5), ("scores_e5", 2.0, 300.0)):
        (tmp_path / f"{name}.tsv").write_text(HEADER + f"{s}\t0:00:0{int(s)}\t{rss}\t0\t0\t0\t0\t0\t0\t1\n")
    df = profile_frame(tmp_path)
    assert df["job"].tolist() == ["pipelines", "scores_e5", "selection"]
    assert df["share"].tolist() == [0.6, 0.2, 0.2] and df["max_rss_mb"].iloc[0] == 400.5
    assert "total (sum over jobs)" in profile_text(tmp_path, 2) and "selection" not in profile_text(tmp_path, 2)


def test_no_benchmarks_says_run_first(tmp_path):
    with pytest.raises(InputError, match="run the workflow first"):
        profile_frame(tmp_path)
