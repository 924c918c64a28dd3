"""Figures. Every function reads result tables (CSV) only, never raw data."""
from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..core.signals import Signal
from ..gate.loco import G3_REL
from .sets import external_label

LANG_NAMES = {"en": "English", "ko": "Korean"}
CHANCE = "chance, 0.5 (below: the signal ranks out-of-catalog requests higher)"
FIT_STYLE = {"marker": "D", "color": "C3"}  # a gate fitted on the experiment's own set and applied elsewhere


def save(fig, stem) -> None:
    """``stem``.png and ``stem``.pdf, without timestamps so reruns are byte-stable."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(stem.with_suffix(".png"), dpi=150, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(stem.with_suffix(".pdf"), bbox_inches="tight", metadata={"CreationDate": None, "ModDate": None})
    plt.close(fig)


def timing_source(table_csv, df: pd.DataFrame | None = None) -> str:
    """The line under a figure that plots timings: the table it reads and how far its timings hold. Uses the
    table's own load or time columns where it records them (``load*``, ``measured_at``, ``timestamp``)."""
    recorded = []
    for col in [] if df is None else [c for c in df.columns if c.startswith("load") or c in ("measured_at", "timestamp")]:
        values = df[col].dropna().unique()
        if len(values):
            recorded.append(f"{col} {values[0]}" if len(values) == 1 else f"{col} {min(values)} to {max(values)}")
    where = f"Timings from {table_csv}: one run's measurement on this machine"
    return (f"{where} ({', '.join(recorded)})." if recorded
            else f"{where}, load not recorded; timings vary with machine load.")


def fig_operating_points(curves_csv, points_csv, stem, signals: dict[str, Signal]) -> None:
    """Figure 2: each gate's best coverage at every danger rate, its operating point at the budget marked."""
    curves, points = pd.read_csv(curves_csv), pd.read_csv(points_csv)
    budget = points["budget"].iloc[0]
    fig, ax = plt.subplots(figsize=(9.4, 4.6), layout="constrained")
    for i, (gate, df) in enumerate(curves.groupby("gate", sort=False)):
        df = df.sort_values("danger_rate")
        ax.step(df["danger_rate"], df["coverage"].cummax(), where="post", label=signals[gate].short, lw=1.6,
                color=f"C{i}")
        at = points[points["gate"] == gate]
        ax.plot(at["danger_rate"], at["best_coverage"], "o", ms=5, color=f"C{i}")
    ax.axvline(budget, color="k", ls="--", lw=1, label=f"danger budget {budget:.3f} (dots: each gate's point there)")
    current, extended = points["ceiling_current"].iloc[0], points["ceiling_extended"].iloc[0]
    if np.isclose(current, extended):  # one line, not one hidden under the other
        ax.axhline(current, color="grey", ls=":", lw=1.2, label=f"current = extended ceiling {current:.3f}")
    else:
        ax.axhline(current, color="grey", ls=":", lw=1.2, label=f"current-catalog ceiling {current:.3f}")
        ax.axhline(extended, color="grey", ls="-.", lw=1.2, label=f"extended ceiling (multistep local) {extended:.3f}")
    ax.set_xlabel("danger rate (gold-delegate sent to a local action / all)")
    ax.set_ylabel("local coverage (resolved locally and correctly / all)")
    ax.set_title("Gate operating points: best coverage at each danger rate")
    ax.set_xlim(0, max(curves["danger_rate"].max() * 1.03, budget * 2))  # the whole sweep, the budget well inside
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))  # beside the curves, never over them
    save(fig, stem)


def reliability_figure(curves: pd.DataFrame, signals: dict[str, Signal], slice_name="all"):
    """Figure 3 from reliability.csv's rows: one panel per gate, before and after calibration."""
    curves = curves[curves["slice"] == slice_name]
    gates = list(dict.fromkeys(curves["gate"]))
    # two gates a row, each panel over its bin counts, so a panel stays legible at the report's width; constrained
    # layout puts the "outside" legend below the x-axis labels, not on them
    cols = min(2, len(gates))
    rows = -(-len(gates) // cols)
    fig, grid = plt.subplots(2 * rows, cols, figsize=(5.2 * cols, 5.0 * rows + 0.6), squeeze=False, sharex=True,
                             layout="constrained", height_ratios=[3, 1.1] * rows)
    top = max(1, int(curves["n"].max()))
    for j, gate in enumerate(gates):
        ax, low = grid[2 * (j // cols)][j % cols], grid[2 * (j // cols) + 1][j % cols]
        for i, (method, df) in enumerate(curves[curves["gate"] == gate].groupby("method", sort=False)):
            ax.plot(df["mean_predicted"], df["fraction_in_catalog"], lw=1.2, color=f"C{i}",
                    label="uncalibrated" if method == "none" else method)
            # a point's area grows with its bin's items, so a bin of a handful cannot pass for a trend
            ax.scatter(df["mean_predicted"], df["fraction_in_catalog"], s=3 + 6 * np.sqrt(df["n"]), color=f"C{i}",
                       zorder=3)
            if len(df) == 1:  # a calibrator that maps every item to one value
                ax.annotate(f"{method}: constant", (df["mean_predicted"].iloc[0], df["fraction_in_catalog"].iloc[0]),
                            textcoords="offset points", xytext=(6, -10), fontsize=7, color=f"C{i}")
            low.vlines(df["mean_predicted"], 0.8, df["n"], color=f"C{i}", lw=1.2)
            low.plot(df["mean_predicted"], df["n"], "o", ms=2.5, color=f"C{i}")
        ax.plot([0, 1], [0, 1], color="k", lw=0.8, ls="--", label="perfect")
        raw = "" if signals[gate].log_odds else " (uncalibrated: a raw cosine, not a probability)"
        ax.set_title(signals[gate].short + raw, fontsize=10)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.04, 1.06)  # a fraction of 0 or 1 sits inside the frame, not on it
        ax.grid(alpha=0.3)
        ax.set_ylabel("observed fraction in catalog", fontsize=8)
        low.set_yscale("log")
        low.set_ylim(0.8, top * 1.6)
        low.set_xlabel("mean predicted P(in catalog)")
        low.set_ylabel("items in bin", fontsize=8)
        low.grid(alpha=0.3)
    for j in range(len(gates), rows * cols):  # an odd gate count leaves one cell empty
        grid[2 * (j // cols)][j % cols].remove()
        grid[2 * (j // cols) + 1][j % cols].remove()
    handles, labels = grid[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8)
    fig.suptitle(f"Reliability of the gates ({slice_name} utterances, out-of-fold calibration; "
                 "a point's area grows with its bin's items, counted in the strip under each panel)", fontsize=10)
    return fig


def fig_reliability(curves_csv, stem, signals: dict[str, Signal], slice_name="all") -> None:
    save(reliability_figure(pd.read_csv(curves_csv), signals, slice_name), stem)


def fig_candidate_ablation(ablation_csv, stem, lang="all") -> None:
    df = pd.read_csv(ablation_csv)
    slices = ["match", "mismatch"] if df["slice"].isin(["match", "mismatch"]).any() else ["all"]
    df = df[(df["lang"] == lang) & (df["slice"].isin(slices))]
    # one panel per slice, each on its own y range: matched-vocabulary curves bunch near 1 and would hide each other
    fig, axes = plt.subplots(1, len(slices), figsize=(5.4 * len(slices), 4.6), squeeze=False, layout="constrained")
    rankers = list(dict.fromkeys(df["ranker"]))
    curves = {key: d.sort_values("k") for key, d in df.groupby(["ranker", "slice"], sort=False)}
    markers = "osD^vP*X"
    ks = sorted(df["k"].unique())
    for ax, slc in zip(axes[0], slices):
        for (ranker, s_), d in curves.items():
            if s_ != slc:
                continue
            i = rankers.index(ranker)
            color = f"C{i}"
            # rankers whose curves coincide would hide each other: each gets its own marker and a small sideways
            # shift (log axis), and the legend names the ranker a curve lies on
            x = d["k"] * 10 ** ((i - (len(rankers) - 1) / 2) * 0.01)
            same = [r for r in rankers[:i] if (r, slc) in curves and len(curves[r, slc]) == len(d)
                    and np.allclose(curves[r, slc]["top1_mean"].to_numpy(), d["top1_mean"].to_numpy(), atol=0.005)]
            label = ranker + (f" (= {same[0]} within 0.005)" if same else "")
            ax.plot(x, d["top1_mean"], "-", marker=markers[i % len(markers)], ms=6 if same else 4,
                    mfc="none" if same else color, color=color, label=label, zorder=3 + (1 if same else 0))
            ax.fill_between(x, d["top1_mean"] - d["top1_std"], d["top1_mean"] + d["top1_std"], color=color, alpha=0.12)
        spread = df.loc[df["slice"] == slc, "top1_mean"], df.loc[df["slice"] == slc, "top1_std"]
        ax.set_ylim(max(0.0, (spread[0] - spread[1]).min() - 0.02), min(1.005, (spread[0] + spread[1]).max() + 0.02))
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(ks)
        ax.set_xticklabels([str(k) for k in ks])
        ax.set_xlabel("candidates offered (gold + uniform distractors)")
        ax.set_title(f"{slc} requests" if slc != "all" else "all requests", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("top-1 accuracy (mean over seeds, band = 1 sd)")
    fig.suptitle("Selection accuracy against candidate count ("
                 + ("y ranges differ; " if len(slices) > 1 else "") + "markers shifted apart)", fontsize=11)
    save(fig, stem)


def fig_jaccard(items_csv, stem) -> None:
    """Figure 4: Jaccard distributions, one panel per language."""
    items = pd.read_csv(items_csv)
    langs = sorted(items["lang"].unique())
    fig, axes = plt.subplots(1, len(langs), figsize=(4.6 * len(langs), 3.8), squeeze=False, sharey=True,
                             layout="constrained")
    for ax, lang in zip(axes[0], langs):
        d = items[items["lang"] == lang]
        order = {"synthetic match": 0, "synthetic mismatch": 1, "synthetic mismatch_hard": 2}  # then the others
        names = sorted(dict.fromkeys(d["dataset"]), key=lambda n: (order.get(n, 3), n))
        values = [d[d["dataset"] == n]["jaccard"] for n in names]
        ax.boxplot(values, showfliers=False)
        for x, v in enumerate(values, 1):  # a box flat at 0 is a line, easily missed: say how much sits there
            if v.quantile(0.75) == 0:
                ax.annotate(f"{(v == 0).mean():.0%} at 0", (x, 0), textcoords="offset points", xytext=(0, 5),
                            ha="center", fontsize=7)
        ax.set_xticks(range(1, len(names) + 1))
        # "synthetic" over the slice's name: side by side the names of neighbouring boxes ran together
        ax.set_xticklabels([f"{n.replace('synthetic ', 'synthetic' + chr(10))}\n(n={len(v)})"
                            for n, v in zip(names, values)], fontsize=7)
        ax.set_title(LANG_NAMES.get(lang, lang))
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].set_ylabel("character 3-gram Jaccard with the gold tool text")
    fig.suptitle("Vocabulary overlap: the experiment's own slices and external sets", fontsize=10)
    save(fig, stem)


def fig_gate_by_overlap(table_csv, stem, signals: dict[str, Signal]) -> None:
    """Left: AUC per overlap bin of G3, length and each encoder gate (95% intervals); right: top-1 per ranker."""
    df = pd.read_csv(table_csv)
    bins = list(dict.fromkeys(df["bin"]))
    x = range(len(bins))
    ticks = [f"{b}\n{lo:.2f}-{hi:.2f}\n{n} in" for b, lo, hi, n in
             df.drop_duplicates("bin")[["bin", "jaccard_low", "jaccard_high", "n_in"]].itertuples(index=False)]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
    shown = ["g3", "length"] + [n for n, s in signals.items() if s.kind == "encoder"]
    auc = df[df["measure"] == "auc"]
    for i, name in enumerate(n for n in shown if n in set(auc["name"])):
        d = auc[auc["name"] == name].set_index("bin").loc[bins]
        off = (i - 1.5) * 0.06
        left.errorbar([v + off for v in x], d["value"], yerr=[d["value"] - d["ci_low"], d["ci_high"] - d["value"]],
                      marker="o", ms=4, capsize=3, lw=1.4, label=signals[name].short)
    left.axhline(0.5, color="grey", ls=":", lw=1)
    left.set_ylabel("AUC: bin's in-catalog items vs all out")
    left.set_title("Gates by overlap with the gold text")
    top1 = df[df["measure"] == "top1"]
    for i, (name, d) in enumerate(top1.groupby("name", sort=False)):  # rankers that coincide stay apart
        off = (i - (top1["name"].nunique() - 1) / 2) * 0.06
        right.plot([v + off for v in x], d.set_index("bin").loc[bins, "value"], marker="osD^vP*X"[i % 8], ms=4,
                   lw=1.4, label=name)
    right.set_ylabel("top-1 over the catalog's actions")
    right.set_title("Rankers by overlap with the gold text")
    right.set_ylim(0, 1.02)
    for ax in (left, right):
        ax.set_xticks(list(x))
        ax.set_xticklabels(ticks, fontsize=8)
        ax.set_xlabel(f"Jaccard bin (character 3-grams; every bin against all {int(df['n_out'].iloc[0])} out)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3)  # under the panel, off the data
    save(fig, stem)


def set_title(table: pd.DataFrame, name: str, own: str | None, key: str = "set") -> str:
    """A panel's set as the claims matrix names it (the experiment's own set, else an external one) with its item
    counts: the external CallDecision set and an experiment called functionchat share the table name."""
    d = table[table[key] == name].iloc[0]
    label = name if name == own or own is None else external_label(name)
    return f"{label}: {int(d['n_in'])} in / {int(d['n_out'])} out"


def gate_transfer_figure(table: pd.DataFrame, signals: dict[str, Signal], own: str | None = None):
    """Gates x sets from gate_transfer.csv: AUROC with 95% intervals, one panel per set, modes side by side;
    ``own``: the experiment's set (the others are external)."""
    sets = list(dict.fromkeys(table["set"]))
    gates = list(dict.fromkeys(table["gate"]))
    styles = {"within": ("o", "C0", -0.12), "raw": ("s", "C2", -0.12), "transfer": FIT_STYLE | {"offset": 0.12}}
    fig, axes = plt.subplots(1, len(sets), figsize=(3.3 * len(sets) + 1.6, 0.32 * len(gates) + 1.6), squeeze=False,
                             sharex=True, sharey=True, layout="constrained")
    for ax, name in zip(axes[0], sets):
        d = table[table["set"] == name]
        for mode, style in styles.items():  # a gate is within or raw, and may be transferred
            marker, color, offset = style if isinstance(style, tuple) else (style["marker"], style["color"],
                                                                            style["offset"])
            m = d[d["mode"] == mode]
            if m.empty:
                continue
            y = [gates.index(g) + offset for g in m["gate"]]
            ax.errorbar(m["auc"], y, xerr=[m["auc"] - m["ci_low"], m["ci_high"] - m["auc"]], fmt=marker, ms=4,
                        color=color, capsize=2, lw=1,
                        label=f"fitted on {own} (transfer)" if mode == "transfer" and own else mode)
        ax.axvline(0.5, color="grey", ls=":", lw=1, label=CHANCE)
        ax.set_title(set_title(table, name, own), fontsize=9)
        ax.set_xlabel("AUROC (in vs out)")
        ax.grid(alpha=0.3, axis="x")
    axes[0][0].set_yticks(range(len(gates)))
    axes[0][0].set_yticklabels([signals[g].short if g in signals else g for g in gates], fontsize=8)
    axes[0][0].invert_yaxis()
    _legend(fig, ["within", "raw", "transfer", f"fitted on {own} (transfer)", CHANCE])
    fig.suptitle("Gates within each set and transferred without refit", fontsize=10)
    return fig


def fig_gate_transfer(table_csv, stem, signals: dict[str, Signal], own: str | None = None) -> None:
    save(gate_transfer_figure(pd.read_csv(table_csv), signals, own), stem)


def scaling_figure(df: pd.DataFrame, source="the scaling table"):
    """Latency, our paired latency ratios, build time, index size and peak RSS against catalog size (a tick at
    every size of the table); under the title, the table the timings come from (``source``) and how far they hold.
    A latency lower than at the next smaller size (one run's noise: a larger catalog is not faster) is drawn hollow and
    said so under the title."""
    df = df.assign(line=[f"{r} ({i})" if i == "encoder" else {"toolgate": f"{r}: ours"}.get(i, i)
                         for r, i in zip(df["ranker"], df["implementation"])])
    colors = {line: f"C{i}" for i, line in enumerate(dict.fromkeys(df["line"]))}
    sizes = sorted(df["size"].unique())
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.4))
    faster = []
    panels = [("median_ms", "single-query latency, median (ms)", "log"), ("build_s", "build: index / embed (s)", "log"),
              ("index_bytes", "index size (bytes)", "log"), ("peak_rss_mb", "peak RSS of the process (MB)", "linear")]
    for ax, (col, title, yscale) in zip([axes[0][0], axes[0][2], axes[1][0], axes[1][1]], panels):
        for line, d in df.groupby("line", sort=False):
            ax.plot(d["size"], d[col], marker="o", ms=4, lw=1.6, color=colors[line], label=line)
            if col == "median_ms":
                drop = d[d["median_ms"].diff() < 0]
                ax.plot(drop["size"], drop["median_ms"], "o", ms=7, mfc="white", color=colors[line])
                before = d.shift()
                faster += [f"{line} at {s} tools, {a:.3g} ms against {b:.3g} ms at {int(p)}" for s, a, p, b in
                           zip(drop["size"], drop["median_ms"], before.loc[drop.index, "size"],
                               before.loc[drop.index, "median_ms"])]
        ax.set_yscale(yscale)
        ax.set_title(title, fontsize=10)
    axes[1][1].axhline(1024, color="grey", ls="--", lw=1)
    axes[1][1].text(sizes[0], 1024, " 1 GB", va="bottom", fontsize=8, color="grey")
    axes[1][1].set_ylim(0, max(1150, df["peak_rss_mb"].max() * 1.05))
    ratio = axes[0][1]
    ours = df[df["implementation"] == "toolgate"]
    for ref in ("bm25s", "rank_bm25"):
        d = ours.dropna(subset=[f"ours_over_{ref}"])
        ratio.plot(d["size"], d[f"ours_over_{ref}"], marker="s", ms=4, lw=1.6, color=colors.get(ref, "k"),
                   label=f"ours / {ref}")
    for y, text in ((0.8, "1.25x faster"), (1, "equal"), (2, "2x slower")):
        ratio.axhline(y, color="grey", ls="-" if y == 1 else ":", lw=1)
        ratio.text(sizes[0], y, f" {text}", va="top" if y < 1 else "bottom", fontsize=8, color="grey")
    ratio.set_yscale("log")
    ratio.set_title("our latency / reference's, same query (median)", fontsize=10)
    ratio.legend(fontsize=8, loc="center right")
    for ax in axes.flat[:5]:
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(sizes)
        ax.set_xticklabels([str(s) for s in sizes])
        ax.set_xlabel("catalog size (tools)")
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    axes[1][2].axis("off")
    axes[1][2].legend(handles, labels, loc="center", fontsize=10, title="implementation")
    timed = sorted({int(q) for q in df.get("queries_timed", pd.Series(dtype=float)).dropna()})
    note = timing_source(source, df)
    if timed:
        note += f" Queries timed per point: {', '.join(map(str, timed))}."
    if faster:
        note += "\n" + textwrap.fill("Hollow: a median latency below the next smaller catalog's, which the larger "
                                     "catalog cannot cause (run-to-run noise of this run): " + "; ".join(faster) + ".",
                                     170)
    fig.suptitle("Cost against catalog size (CPU, one fresh process per point; encoders and rank_bm25 capped)\n"
                 + note, fontsize=9)
    fig.tight_layout()
    return fig


def fig_scaling(table_csv, stem) -> None:
    save(scaling_figure(pd.read_csv(table_csv), table_csv), stem)


def fig_tokenizer_ablation(table_csv, stem, lang="ko") -> None:
    """One language's top-1 by tokenizer, a panel per slice (match, mismatch; all when unsplit), a marker per
    candidate count with its 95% interval; each tokenizer's index size and median latency under its name."""
    df = pd.read_csv(table_csv)
    d = df[df["lang"] == lang]
    slices = [s for s in ("match", "mismatch") if (d["slice"] == s).any()] or ["all"]
    variants = list(dict.fromkeys(df["variant"]))
    ks = sorted(d["k"].unique(), reverse=True)
    cost = df.drop_duplicates("variant").set_index("variant")
    labels = [f"{v}\n{cost.at[v, 'index_bytes'] / 1024:.1f} KB\n{cost.at[v, 'median_ms']:.3f} ms" for v in variants]
    fig, axes = plt.subplots(1, len(slices), figsize=(5.4 * len(slices), 4.4), squeeze=False)
    for ax, slc in zip(axes[0], slices):
        for j, k in enumerate(ks):
            g = d[(d["slice"] == slc) & (d["k"] == k)].set_index("variant").loc[variants]
            x = np.arange(len(variants)) + (j - (len(ks) - 1) / 2) * 0.2
            ax.errorbar(x, g["top1"], yerr=[g["top1"] - g["top1_ci_low"], g["top1_ci_high"] - g["top1"]], fmt="o",
                        ms=4, capsize=3, lw=1.2, label=f"{k} candidates" + (" (full catalog)" if k == ks[0] else ""))
        ax.set_xticks(range(len(variants)))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_title(f"{slc} (n = {int(g['n'].iloc[0])})", fontsize=10)
        ax.set_ylim(top=1.005)
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].set_ylabel("top-1 of the gold action (95% pair-cluster bootstrap interval)", fontsize=8)
    axes[0][0].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"{LANG_NAMES.get(lang, lang)} requests: top-1 by BM25 unit "
                 "(under each: index size, median single-query latency)\n" + timing_source(table_csv, df), fontsize=10)
    fig.tight_layout()
    save(fig, stem)


def gate_loco_figure(table: pd.DataFrame, signals: dict[str, Signal], own: str | None = None):
    """gate_loco.csv: per test set, each gate within the set (or raw) against the same gate fitted on each other set
    and on all of them pooled; the top BM25 score's AUC (the single-pool ladder's signal) as a dashed line. Two
    panels a row, so the labels stay legible at the report's width; each fitted-on set keeps one marker and colour
    in every panel (the experiment's own set, ``own``, that of the transfer figure)."""
    sets = list(dict.fromkeys(table["test_set"]))
    gates = list(dict.fromkeys(table["gate"]))
    fits = list(dict.fromkeys(table.loc[table["mode"] == "transfer", "fit_set"]))
    others = iter(zip("v^PXh", ("C5", "C9", "C8", "C6", "C7")))
    style = {f: (FIT_STYLE["marker"], FIT_STYLE["color"]) if f == own else next(others) for f in fits}
    cols = min(2, len(sets))
    rows = -(-len(sets) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.8 * cols + 1.4, (0.3 * len(gates) + 1.0) * rows + 0.8),
                             squeeze=False, sharex=True, sharey=True, layout="constrained")
    for ax, name in zip(axes.flat, sets):
        d = table[table["test_set"] == name]
        for mode, marker, color, offset in (("within", "o", "C0", -0.3), ("raw", "s", "C2", -0.3),
                                            ("pooled", "p", "C1", -0.15)):
            m = d[d["mode"] == mode]
            if not m.empty:
                ax.errorbar(m["auc"], [gates.index(g) + offset for g in m["gate"]],
                            xerr=[m["auc"] - m["ci_low"], m["ci_high"] - m["auc"]], fmt=marker, ms=4, color=color,
                            capsize=2, lw=1, label={"pooled": "fitted on the other sets pooled"}.get(mode, mode))
        for fit, m in d[d["mode"] == "transfer"].groupby("fit_set", sort=False):  # a row each, 0.15 apart
            ax.plot(m["auc"], [gates.index(g) + 0.15 * fits.index(fit) for g in m["gate"]], style[fit][0], ms=5,
                    color=style[fit][1], label=f"fitted on {fit}")
        ladder = d[d["gate"] == "top_score"]
        if not ladder.empty:
            ax.axvline(float(ladder["auc"].iloc[0]), color="k", ls="--", lw=1, label="top BM25 score (ladder)")
        ax.axvline(0.5, color="grey", ls=":", lw=1, label=CHANCE)
        ax.set_title(f"tested on {set_title(table, name, own, 'test_set')}", fontsize=9)
        ax.set_xlabel("AUROC (in vs out)")
        ax.tick_params(labelbottom=True, labelsize=8)  # every panel its own AUROC scale, the rows are far apart
        ax.grid(alpha=0.3, axis="x")
    for ax in axes.flat[len(sets):]:  # an odd set count leaves one cell empty
        ax.remove()
    axes[0][0].set_yticks(range(len(gates)))
    names = {**signals, G3_REL.name: G3_REL}  # a gate only the leave-one-catalog-out study fits
    axes[0][0].set_yticklabels([names[g].short if g in names else g for g in gates])
    axes[0][0].invert_yaxis()
    _legend(fig, ["within", "raw", "fitted on the other sets pooled", *(f"fitted on {f}" for f in fits),
                             "top BM25 score (ladder)", CHANCE])
    fig.suptitle("Leave one catalog out: each gate within a set against fitted elsewhere", fontsize=10)
    return fig


def _legend(fig, order=()) -> None:
    """One legend under the panels for every entry drawn in any of them, ``order``'s entries first in that order."""
    entries = {}
    for ax in fig.axes:
        entries |= dict(zip(*reversed(ax.get_legend_handles_labels())))
    names = [n for n in order if n in entries] + [n for n in entries if n not in order]
    fig.legend([entries[n] for n in names], names, loc="outside lower center", ncol=min(len(names), 4), fontsize=8)


def fig_gate_loco(table_csv, stem, signals: dict[str, Signal], own: str | None = None) -> None:
    save(gate_loco_figure(pd.read_csv(table_csv), signals, own), stem)
