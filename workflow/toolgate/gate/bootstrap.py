"""Cluster bootstrap of paired AUC differences on mismatch-in vs out (paper Section 5; a set without a mismatch
slice: all in vs out).

Clusters are utterances (as the paper) or pairs (a request and its translation drawn together); every signal is read
on the same resamples, so differences are paired, and all resamples are one vectorised call, no loop.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.signals import encoder_signal
from ..metrics import weighted_auc
from ..stats import auc_interval, cluster_weights, percentile_interval
from ..tables import write_table

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Resamples:
    """A cluster bootstrap's settings, shared by every interval of one comparison: how many resamples, their seed
    and the intervals' level."""
    n: int
    seed: int
    level: float = 0.95


def paired_differences(signals: pd.DataFrame, y: np.ndarray, clusters: np.ndarray, diffs: list[tuple[str, str]],
                       resamples: Resamples, metric=("auc", weighted_auc)) -> pd.DataFrame:
    """metric(a) - metric(b) for each pair of ``diffs`` with its paired percentile interval.

    ``metric``: (name, function(scores, y, weights) -> a value per weight row), AUC by default; the name
    prefixes the point-value columns (``auc_a``, ``auc_b``).
    """
    name, fn = metric
    w = cluster_weights(clusters, resamples.n, resamples.seed)
    names = sorted({n for d in diffs for n in d})
    point = {n: fn(signals[n].to_numpy(), y, np.ones(len(y))) for n in names}
    boot = {n: fn(signals[n].to_numpy(), y, w) for n in names}
    recs = []
    for a, b in diffs:
        lo, hi = percentile_interval(boot[a] - boot[b], resamples.level)
        recs.append({"a": a, "b": b, f"{name}_a": point[a], f"{name}_b": point[b], "difference": point[a] - point[b],
                     "ci_low": lo, "ci_high": hi, "excludes_zero": bool(lo > 0 or hi < 0)})
    return pd.DataFrame(recs)


def difference_label(a: str, b: str) -> str:
    """The ``name`` of a paired-difference row in the long tables (gate_by_overlap, gate_by_subtype, the map)."""
    return f"{a} - {b}"


def auc_measures(signals: pd.DataFrame, y: np.ndarray, clusters: np.ndarray, names, diffs: list[tuple[str, str]],
                 resamples: Resamples) -> list[dict]:
    """Long-table rows (measure, name, value, ci_low, ci_high): each signal's AUC (``auc``) and each pair's paired
    difference (``auc difference``), every interval on the same cluster-bootstrap resamples."""
    w = cluster_weights(clusters, resamples.n, resamples.seed)
    recs = []
    for n in names:
        value, lo, hi = auc_interval(signals[n], y, w, resamples.level)
        recs.append({"measure": "auc", "name": n, "value": value, "ci_low": lo, "ci_high": hi})
    for d in paired_differences(signals, y, clusters, diffs, resamples).itertuples():
        recs.append({"measure": "auc difference", "name": difference_label(d.a, d.b), "value": d.difference,
                     "ci_low": d.ci_low, "ci_high": d.ci_high})
    return recs


# The ``slice`` label of rows computed on every in-catalog item, for sets without the requested slice.
NO_SLICE = "all in vs out (no mismatch slice)"


def slice_title(label: str) -> str:
    """What a row's ``slice`` label compares, in words: ``mismatch`` -> "mismatch-in vs out"."""
    return label if label == NO_SLICE else f"{label}-in vs out"


def bootstrap_frame(signals: pd.DataFrame, diffs, units=("utterance", "pair"), n_resamples=2000, seed=0,
                    slice_name="mismatch") -> pd.DataFrame:
    label = slice_name
    if not (signals["slice"] == slice_name).any():  # e.g. an external set with no vocabulary split
        label = NO_SLICE
        sub = signals
    else:
        sub = signals[signals["slice"].isin([slice_name, "out"])]
    y = sub["in_catalog"].to_numpy()
    frames = []
    for unit in units:
        clusters = sub["utterance_id" if unit == "utterance" else "pair_id"].to_numpy()
        t0 = time.perf_counter()
        df = paired_differences(sub, y, clusters, diffs, Resamples(n_resamples, seed))
        log.info("cluster unit %s: %d resamples of %d items in %.2f s", unit, n_resamples, len(sub), time.perf_counter() - t0)
        df.insert(0, "cluster_unit", unit)
        df.insert(1, "slice", label)
        df.insert(2, "resamples", n_resamples)
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def default_differences(encoder: str, second: str | None) -> list[tuple[str, str]]:
    """The paper's six paired differences (fewer when there is no second encoder)."""
    e = encoder_signal(encoder).name
    diffs = [(e, "g3"), (e, "length_fitted")]
    if second:
        s = encoder_signal(second).name
        diffs += [(s, "g3"), (e, s)]
    return diffs + [("g3", "g3_no_length"), ("length_fitted", "g3")]


def write_bootstrap(exp):
    """tables/bootstrap.csv from the rule's ``signals`` input: the paper's differences of ``exp.roles``' encoders."""
    t0 = time.perf_counter()
    signals = pd.read_csv(exp.input.signals)
    n_resamples, seed = exp.gate.resamples, exp.seed
    df = bootstrap_frame(signals, default_differences(exp.roles.encoder, exp.roles.second_encoder),
                         exp.gate.cluster_units, n_resamples, seed)
    elapsed = time.perf_counter() - t0
    log.info("bootstrap finished in %.2f s", elapsed)
    # the title names the slice the rows were computed on, which falls back when the set has no mismatch slice
    write_table(df, exp.output.table, f"Cluster bootstrap: paired AUC differences, {slice_title(df['slice'].iloc[0])}",
                f"{n_resamples} resamples, 95% percentile intervals, seed {seed} (run time in the rule's log).", seed,
                paper=("bootstrap.",))
    return df
