"""The overlap map's figure: one panel per encoder, bin ranges on the axes, starred cells, a colour bar centred on 0."""
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from toolgate.core.signals import registry
from toolgate.report.overlap_map import fig_gate_overlap_map, overlap_map_figure

REG = registry("bm25", ["e5", "usem3"])


def _table():
    """2 x 2 cells; in Q2 x out Q2 too thin (NaN); e5 wins in Q2 x out Q1 (interval above 0)."""
    recs = []
    for (i, o), (v, lo, hi) in {("Q1", "Q1"): (-0.2, -0.3, -0.1), ("Q1", "Q2"): (0.01, -0.05, 0.06),
                                ("Q2", "Q1"): (0.3, 0.1, 0.4), ("Q2", "Q2"): (np.nan,) * 3}.items():
        head = {"in_bin": i, "in_jaccard_low": 0.0 if i == "Q1" else 0.1, "in_jaccard_high": 0.1 if i == "Q1" else 0.9,
                "out_bin": o, "out_jaccard_low": 0.0 if o == "Q1" else 0.05,
                "out_jaccard_high": 0.05 if o == "Q1" else 0.4, "n_in": 20, "n_out": 12 if o == "Q1" else 3}
        for name in ("e5_maxcos - g3", "usem3_maxcos - g3"):
            recs.append({**head, "measure": "auc difference", "name": name, "value": v, "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(recs)


def test_map_figure_panels_labels_and_marks(tmp_path):
    fig = overlap_map_figure(_table(), REG)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["e5 (max cosine) minus G3", "usem3 (max cosine) minus G3"]
    assert [t.get_text() for t in panels[0].get_xticklabels()] == ["Q1\n0.000-0.050", "Q2\n0.050-0.400"]
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["Q1\n0.000-0.100", "Q2\n0.100-0.900"]
    texts = [t.get_text() for t in panels[0].texts]
    assert "+0.30*\n[+0.10, +0.40]" in texts and "+0.01\n[-0.05, +0.06]" in texts and "20 in / 3 out\ntoo few" in texts
    assert len(panels[0].patches) == 2  # bold borders: the two cells whose interval excludes 0
    image = panels[0].images[0]
    assert image.norm.vmin == -image.norm.vmax == -0.3
    plt.close(fig)
    _table().to_csv(tmp_path / "map.csv", index=False)
    fig_gate_overlap_map(tmp_path / "map.csv", tmp_path / "fig", REG)
    assert (tmp_path / "fig.png").stat().st_size > 10_000 and (tmp_path / "fig.pdf").exists()


def test_a_bound_near_0_shows_which_side_of_0_it_is_on():
    table = _table()
    table.loc[(table["in_bin"] == "Q1") & (table["out_bin"] == "Q1"), "ci_high"] = -0.0017  # two decimals: -0.00
    fig = overlap_map_figure(table, REG)
    assert "-0.20*\n[-0.30, -0.002]" in [t.get_text() for t in fig.axes[0].texts]
    plt.close(fig)
