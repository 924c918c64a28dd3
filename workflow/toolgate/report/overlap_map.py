"""The overlap map's figure, from gate_overlap_map.csv alone (kept apart from plots.py, which is at its size limit)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import Normalize
from matplotlib.patches import Rectangle

from ..core.signals import Signal, of_kind
from ..gate.bootstrap import difference_label
from .plots import save


def _ticks(df: pd.DataFrame, side: str) -> tuple[list[str], list[str]]:
    """(bin names in table order, tick labels naming each bin's Jaccard range)."""
    cols = [f"{side}_bin", f"{side}_jaccard_low", f"{side}_jaccard_high"]
    bins = df.drop_duplicates(cols[0])[cols]
    return list(bins[cols[0]]), [f"{b}\n{lo:.3f}-{hi:.3f}" for b, lo, hi in bins.itertuples(index=False)]


def _bound(v: float) -> str:
    """An interval bound, to three decimals where two would print it as 0 and hide which side of 0 it is on."""
    return f"{v:+.3f}" if abs(v) < 0.005 else f"{v:+.2f}"


def overlap_map_figure(table: pd.DataFrame, signals: dict[str, Signal]):
    """One heatmap per encoder gate of its AUC minus G3's; starred, bold-bordered cells' intervals exclude 0."""
    encoders = [e for e in of_kind(signals, "encoder") if difference_label(e, "g3") in set(table["name"])]
    in_bins, in_ticks = _ticks(table, "in")
    out_bins, out_ticks = _ticks(table, "out")
    d = table[table["measure"] == "auc difference"]
    bound = max(float(np.nanmax(np.abs(d["value"]))) if d["value"].notna().any() else 0.0, 0.05)
    norm = Normalize(-bound, bound)  # symmetric, so 0 sits at the colour bar's centre
    fig, axes = plt.subplots(1, len(encoders), figsize=(4.6 * len(encoders) + 1.2, 4.6), squeeze=False,
                             layout="constrained")
    for ax, enc in zip(axes[0], encoders):
        cell = d[d["name"] == difference_label(enc, "g3")].set_index(["in_bin", "out_bin"])
        grid = np.array([[cell.loc[(i, o), "value"] for o in out_bins] for i in in_bins], float)
        image = ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu", norm=norm, origin="lower", aspect="auto")
        ax.set_facecolor("0.85")  # cells without a value (too few items)
        for (r, c), v in np.ndenumerate(grid):
            row = cell.loc[(in_bins[r], out_bins[c])]
            if np.isnan(v):
                ax.text(c, r, f"{row['n_in']} in / {row['n_out']} out\ntoo few", ha="center", va="center", fontsize=7)
                continue
            excludes = row["ci_low"] > 0 or row["ci_high"] < 0
            ax.text(c, r, f"{v:+.2f}{'*' if excludes else ''}\n[{_bound(row['ci_low'])}, {_bound(row['ci_high'])}]",
                    ha="center", va="center", fontsize=7.5, fontweight="bold" if excludes else "normal",
                    color="white" if abs(v) > 0.6 * bound else "black")
            if excludes:
                ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, lw=2.2, ec="black"))
        ax.set_xticks(range(len(out_bins)), out_ticks, fontsize=8)
        ax.set_yticks(range(len(in_bins)), in_ticks, fontsize=8)
        ax.set_xlabel("out-of-catalog items: highest Jaccard with any action")
        ax.set_title(f"{signals[enc].short} minus G3", fontsize=10)
    axes[0][0].set_ylabel("in-catalog items: Jaccard with the gold action")
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.85, label="AUC difference (> 0: encoder gate better)")
    fig.suptitle("Encoder gate minus G3 on the overlap map (* and bold border: 95% interval excludes 0)", fontsize=10)
    return fig


def fig_gate_overlap_map(table_csv, stem, signals: dict[str, Signal]) -> None:
    save(overlap_map_figure(pd.read_csv(table_csv), signals), stem)
