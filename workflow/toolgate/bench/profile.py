"""Where a workflow run's time went: per-rule wall times from Snakemake's benchmark files, slowest first."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..core.errors import InputError


def profile_frame(folder) -> pd.DataFrame:
    """One row per job (``benchmarks/<experiment>/<rule>[_<wildcards>].tsv``): seconds, max RSS, share of the total."""
    files = sorted(Path(folder).glob("*.tsv"))
    if not files:
        raise InputError(folder, "no benchmark files; run the workflow first (every rule writes one)")
    recs = []
    for f in files:
        last = pd.read_csv(f, sep="\t").iloc[-1]
        recs.append({"job": f.stem, "seconds": float(last["s"]), "max_rss_mb": float(last["max_rss"])})
    df = pd.DataFrame(recs).sort_values("seconds", ascending=False, kind="stable").reset_index(drop=True)
    df["share"] = df["seconds"] / df["seconds"].sum()
    return df


def profile_text(folder, top: int) -> str:
    df = profile_frame(folder)
    lines = [f"{'job':<34} {'seconds':>9} {'share':>6} {'max RSS MB':>11}"]
    lines += [f"{r.job:<34} {r.seconds:9.1f} {r.share:6.1%} {r.max_rss_mb:11.0f}" for r in df.head(top).itertuples()]
    lines.append(f"{'total (sum over jobs)':<34} {df['seconds'].sum():9.1f}")
    return "\n".join(lines)
