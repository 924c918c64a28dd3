"""Figures are drawn from tables alone, with legend labels from the signal registry, and legends overlap no labels."""
import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.text import Text

from toolgate.gate.signals import registry
from toolgate.report.plots import fig_operating_points, fig_reliability, reliability_figure

REG = registry("bm25", ["e5"])


def test_figures_from_small_tables(tmp_path):
    curves = pd.DataFrame({"gate": ["g3", "g3", "e5_maxcos", "e5_maxcos"], "threshold": [1, 0, 1, 0],
                           "danger_rate": [0.0, 0.2, 0.0, 0.1], "coverage": [0.1, 0.6, 0.2, 0.5], "admitted": [0.1, 1, 0.1, 1]})
    points = pd.DataFrame({"gate": ["g3", "e5_maxcos"], "budget": [0.06] * 2, "ceiling_current": [0.75] * 2,
                           "ceiling_extended": [0.85] * 2})
    curves.to_csv(tmp_path / "c.csv", index=False)
    points.to_csv(tmp_path / "p.csv", index=False)
    fig_operating_points(tmp_path / "c.csv", tmp_path / "p.csv", tmp_path / "fig2", REG)
    _reliability(("g3", "e5_maxcos")).to_csv(tmp_path / "r.csv", index=False)
    fig_reliability(tmp_path / "r.csv", tmp_path / "fig3", REG)
    for stem in ("fig2", "fig3"):
        assert (tmp_path / f"{stem}.png").stat().st_size > 10_000 and (tmp_path / f"{stem}.pdf").exists()


def _reliability(gates):
    return pd.DataFrame([{"gate": g, "method": m, "slice": "all", "bin": b, "mean_predicted": b / 10 + 0.05,
                          "fraction_in_catalog": b / 10, "n": 5}
                         for g in gates for m in ("none", "platt", "isotonic") for b in range(10)])


@pytest.mark.parametrize("gates", [("g3",), ("g3", "length_fitted", "e5_maxcos")])
def test_reliability_legend_overlaps_no_labels(gates):
    fig = reliability_figure(_reliability(gates), REG)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    # every panel's ticks, tick labels, x-axis label and title; then the figure title
    title = next(c for c in fig.get_children() if isinstance(c, Text) and c.get_text() == fig.get_suptitle())
    others = [ax.get_tightbbox(renderer) for ax in fig.axes] + [title.get_window_extent(renderer)]
    others += [t.get_window_extent(renderer) for ax in fig.axes for t in ax.get_xticklabels() + [ax.xaxis.label]]
    assert not any(box.overlaps(o) for o in others)
    assert fig.bbox.contains(box.x0, box.y0) and fig.bbox.contains(box.x1, box.y1)  # on the canvas, not cut off
    plt.close(fig)
