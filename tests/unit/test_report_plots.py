"""Figures are drawn from tables alone, with legend labels from the signal registry."""
import pandas as pd

from toolgate.report.plots import fig_operating_points, fig_reliability
from toolgate.signals import registry

REG = registry("bm25", ["e5"])


def test_figures_from_small_tables(tmp_path):
    curves = pd.DataFrame({"gate": ["g3", "g3", "e5_maxcos", "e5_maxcos"], "threshold": [1, 0, 1, 0],
                           "danger_rate": [0.0, 0.2, 0.0, 0.1], "coverage": [0.1, 0.6, 0.2, 0.5], "admitted": [0.1, 1, 0.1, 1]})
    points = pd.DataFrame({"gate": ["g3", "e5_maxcos"], "budget": [0.06] * 2, "ceiling_current": [0.75] * 2,
                           "ceiling_extended": [0.85] * 2})
    curves.to_csv(tmp_path / "c.csv", index=False)
    points.to_csv(tmp_path / "p.csv", index=False)
    fig_operating_points(tmp_path / "c.csv", tmp_path / "p.csv", tmp_path / "fig2", REG)
    rel = pd.DataFrame([{"gate": g, "method": m, "slice": "all", "bin": b, "mean_predicted": b / 10 + 0.05,
                         "fraction_in_catalog": b / 10, "n": 5}
                        for g in ("g3", "e5_maxcos") for m in ("none", "platt", "isotonic") for b in range(10)])
    rel.to_csv(tmp_path / "r.csv", index=False)
    fig_reliability(tmp_path / "r.csv", tmp_path / "fig3", REG)
    for stem in ("fig2", "fig3"):
        assert (tmp_path / f"{stem}.png").stat().st_size > 10_000 and (tmp_path / f"{stem}.pdf").exists()
