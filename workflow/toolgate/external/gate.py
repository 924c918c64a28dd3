"""The external gate study: every gate of the registry over each row's own candidates, within and transferred.

Exemplar kNN always reads the scored set's own exemplars: they belong to a catalog, so transfer carries a kNN
gate's weights, not its exemplars.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import GATE_SETS, Gate, Run
from ..core.inputs import query_lengths, raw_signals
from ..core.models import fit_signals, load_payloads, payload_scores
from ..core.rankers import encoder_rankers
from ..core.signals import registry
from ..gate.bootstrap import NO_SLICE, Resamples, paired_differences
from ..gate.loco import catalog_scale
from ..stats import auc_interval, cluster_weights, folds
from .adapters import ExternalSet
from .scoring import padded, row_embeddings, row_scores

log = logging.getLogger(__name__)
LEVEL = 0.95  # bootstrap interval
AUC_COLUMNS = ["dataset", "signal", "gate", "mode", "auc", "ci_low", "ci_high", "n_in", "n_out"]
DIFF_COLUMNS = ["dataset", "cluster_unit", "slice", "resamples", "a", "b", "auc_a", "auc_b", "difference", "ci_low",
                "ci_high", "excludes_zero"]


def row_signals(ext: ExternalSet, rankers: dict[str, dict], lexical: str, fold_list, gate: Gate,
                run: Run) -> pd.DataFrame:
    """Every raw signal of the registry over each row's own candidates (columns named by the registry);
    ``lexical``: the ranker whose scores give the score features (``roles.lexical``)."""
    lex = padded(row_scores(ext, rankers[lexical], run))
    encoders = {name: (padded(row_scores(ext, rankers[name], run)), row_embeddings(ext, rankers[name], run))
                for name in encoder_rankers(rankers)}
    lengths = query_lengths([u["text"] for u in ext.utterances], run.text)
    return raw_signals((lexical, lex), encoders, lengths, (ext.in_catalog, np.array(ext.clusters), fold_list),
                       gate.top_k, ([u["gold_tool"] for u in ext.utterances], ext.candidates))


def gate_signals(ext: ExternalSet, rankers: dict[str, dict], lexical: str, fits: dict | None, gate: Gate,
                 run: Run) -> tuple[pd.DataFrame, dict[str, tuple[str, str]]]:
    """Per-row gate signals of one set and each column's (registry gate, mode): raw / within / transfer.

    Raw signals as computed; every fitted gate out of fold within the set (folds grouped by cluster) under its
    own name, and, for each gate in ``fits`` (the experiment's payloads) whose inputs this set has, the fit
    applied unchanged as ``<gate>_transfer``.
    """
    reg = registry(lexical, encoder_rankers(rankers))
    y = ext.in_catalog
    fl = folds(y, np.array(ext.clusters), gate.folds, run.seed)
    raw = row_signals(ext, rankers, lexical, fl, gate, run)
    within = fit_signals(raw, reg, y, fl)
    signals, meta = {}, {}
    for name in reg:
        signals[name] = within[name] if name in within else raw[name].to_numpy()
        meta[name] = (name, "within" if name in within else "raw")
    for name, fit in (fits or {}).items():
        if name in reg and set(fit["features"]) <= set(raw.columns):
            signals[f"{name}_transfer"], meta[f"{name}_transfer"] = payload_scores(fit, raw), (name, "transfer")
        else:  # fitted on other rankers than this study's: nothing to apply it to
            log.warning("%s: no transfer of %s (inputs %s not computed here)", ext.dataset, name, fit["features"])
    df = pd.DataFrame({"utterance_id": [u["utterance_id"] for u in ext.utterances], "cluster": ext.clusters,
                       "condition": ext.conditions, "in_catalog": y,
                       "n_candidates": [len(c) for c in ext.candidates], **signals})
    return df, meta


def _auc_row(dataset: str, column: str, meta: tuple[str, str], sig, y, w) -> dict:
    value, lo, hi = auc_interval(sig, y, w, LEVEL)
    return {"dataset": dataset, "signal": column, "gate": meta[0], "mode": meta[1], "auc": value,
            "ci_low": lo, "ci_high": hi, "n_in": int(y.sum()), "n_out": int((1 - y).sum())}


@dataclass(frozen=True)
class Comparisons:
    """What the external gate study compares beyond each set's own signals (:func:`external_gate`)."""
    fits: dict | str | Path | None = None  # the experiment's payloads by gate, or gates.json's path; None: no transfer
    differences: tuple = ()  # (a, b) signal pairs whose paired AUC differences each set gets
    bfcl_2plus: bool = True  # BFCL's rows with at least two candidates as a set of their own


def external_gate(rankers: dict[str, dict], lexical: str, sets: dict[str, ExternalSet], gate: Gate, run: Run,
                  compare: Comparisons = Comparisons()) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(AUCs, differences, signals): gate AUC, in-catalog vs out, over each row's own candidates, with cluster-bootstrap
    intervals; the per-row signals of every set with a ``dataset`` column (what leave-one-catalog-out fits on).
    ``compare`` (:class:`Comparisons`): the gates fitted on the experiment to apply unchanged (the default, none: no
    transfer rows), the paired differences and whether BFCL 2+ is a set of its own.

    FunctionChat: CALL vs REJECT (clusters: request text). BFCL: multiple + live_multiple vs irrelevance +
    live_irrelevance (clusters: row). Raw signals are not flipped. Every single-candidate BFCL row is irrelevant, so
    candidate count alone separates much of in from out: ``compare.bfcl_2plus`` adds the rows with two or more.

    ``compare.differences``: (a, b) signal pairs whose paired AUC differences each set also gets, from the set's own
    clusters (the second frame, shaped like bootstrap.csv with a ``dataset`` column; empty without pairs).
    """
    fits = load_payloads(compare.fits) if isinstance(compare.fits, (str, Path)) else compare.fits
    jobs = [(d, key) for key, names in GATE_SETS.items() if key in sets for d in names
            if d != "bfcl_2plus" or compare.bfcl_2plus]
    recs, diffs, frames, scales = [], [], [], {}
    for dataset, key in jobs:
        ext = sets[key]
        if dataset == "bfcl_2plus":  # after "bfcl": the subset reuses its scores and embeddings
            ext = ext.subset([len(c) >= 2 for c in ext.candidates])
        df, meta = gate_signals(ext, rankers, lexical, fits, gate, run)
        if key not in scales:  # bfcl_2plus shares bfcl's catalog: its scale once
            scales[key] = catalog_scale(ext.catalog, rankers[lexical], (ext.lang,), run.text)
        frames.append(df.drop(columns=[c for c, m in meta.items() if m[1] == "transfer"]).assign(
            dataset=dataset, catalog_scale=scales[key]))
        y = df["in_catalog"].to_numpy()
        w = cluster_weights(np.array(ext.clusters), gate.resamples, run.seed)
        for column, m in meta.items():
            recs.append(_auc_row(dataset, column, m, df[column].to_numpy(), y, w))
        pairs = [(a, b) for a, b in compare.differences if a in df and b in df]
        if pairs:
            d = paired_differences(df, y, np.array(ext.clusters), pairs, Resamples(gate.resamples, run.seed, LEVEL))
            diffs.append(d.assign(dataset=dataset, cluster_unit="cluster", slice=NO_SLICE, resamples=gate.resamples))
    diff = pd.concat(diffs, ignore_index=True)[DIFF_COLUMNS] if diffs else pd.DataFrame(columns=DIFF_COLUMNS)
    signals = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["dataset"])
    return pd.DataFrame(recs, columns=AUC_COLUMNS), diff, signals
