"""Leave one catalog out (gate_loco.csv): every compared gate fitted on one set and applied unchanged to each other.

The paper's argument for spending the encoder on abstention: does a gate of BM25 score features keep its separation
on a catalog it was not fitted on, and does a frozen encoder's similarity? docs/metrics.md, 'Leave one catalog out'.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..config import Gate
from ..core.catalog import load_catalog, own_queries
from ..core.models import payload, payload_scores
from ..core.rankers import fit_ranker
from ..core.signals import FEATURES, Signal, compared_gates
from ..stats import auc_interval, cluster_weights, folds
from ..tables import write_table

log = logging.getLogger(__name__)
COLUMNS = ["gate", "kind", "test_set", "mode", "fit_set", "auc", "ci_low", "ci_high", "n_in", "n_out"]
LADDER = "top_score"  # the single-pool ladder's signal (a raw BM25 feature), a row of every set for reference
SUBSETS = {"bfcl_2plus": "bfcl"}  # a set and the set it is a subset of: never fitted on to test each other
SCALED = ("top_score", "raw_margin", "score_per_term")  # BM25 score features in the catalog's own score units
SCALE = "catalog_scale"  # the column of each set's catalog_scale
G3_REL = Signal("g3_rel", "fitted", "G3 with score features relative to the catalog's own scale (out of fold)",
                "G3-rel (catalog-relative)", True, None, tuple(f"{f}_rel" if f in SCALED else f for f in FEATURES),
                compared=True)


def catalog_scale(catalog: list[dict], spec: dict, langs, text) -> float:
    """The median top BM25 score a catalog's actions reach as queries against it (each action's name and description
    in each language: what a request to it paraphrases). It needs no labelled request, only the catalog."""
    ranker = fit_ranker(spec, catalog, tuple(langs), text)
    return float(np.median([np.max(ranker.score(q)) for q in own_queries(catalog, langs)]))


def relative(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the catalog-relative score features (``<feature>_rel``) and G3-rel's inputs."""
    return frame.assign(**{f"{f}_rel": frame[f] / frame[SCALE] for f in SCALED if f in frame})


@dataclass(frozen=True)
class LabelledSet:
    """One set's signals (raw columns and out-of-fold fitted gates), in-catalog labels and bootstrap clusters."""
    frame: pd.DataFrame
    y: np.ndarray
    clusters: np.ndarray


def own_set(signals: pd.DataFrame, gate: Gate) -> LabelledSet:
    """The experiment's main set as the gate study scored it (mismatch_hard left out; gate.cluster_units' first)."""
    main = signals[signals["slice"] != "mismatch_hard"].reset_index(drop=True)
    unit = "utterance_id" if gate.cluster_units[0] == "utterance" else "pair_id"
    return LabelledSet(main, main["in_catalog"].to_numpy(), main[unit].to_numpy())


def external_sets(frame: pd.DataFrame) -> dict[str, LabelledSet]:
    """external/gate_signals.csv by dataset."""
    out = {}
    for name, d in frame.groupby("dataset", sort=False):
        d = d.reset_index(drop=True)
        out[str(name)] = LabelledSet(d, d["in_catalog"].to_numpy(), d["cluster"].astype(str).to_numpy())
    return out


def _row(gate: Signal, where: tuple[str, str, str], values, s: LabelledSet, weights) -> dict:
    """A table row: ``where`` = (test set, mode, fit set)."""
    auc, lo, hi = auc_interval(values, s.y, weights)
    test, mode, fit = where
    return {"gate": gate.name, "kind": "fitted" if gate.inputs else "raw", "test_set": test, "mode": mode,
            "fit_set": fit, "auc": auc, "ci_low": lo, "ci_high": hi, "n_in": int(s.y.sum()),
            "n_out": int((s.y == 0).sum())}


def _oof(s: LabelledSet, inputs: tuple[str, ...], n_folds: int, seed: int) -> pd.Series:
    """A gate the study did not fit (G3-rel) out of fold on the set, on the study's own folds: signals.csv's ``fold``
    column (grouped by pair: a request and its translation on one side), else grouped by the set's clusters as the
    external study groups them."""
    from ..core.models import oof_scores
    if "fold" in s.frame:
        f = s.frame["fold"].to_numpy()
        fold_list = [(np.flatnonzero(f != k), np.flatnonzero(f == k)) for k in np.unique(f)]
    else:
        fold_list = folds(s.y, s.clusters, n_folds, seed)
    return pd.Series(oof_scores(s.frame[list(inputs)].to_numpy(float), s.y, fold_list))


def _fit(sets: list[LabelledSet], inputs: tuple[str, ...]) -> dict:
    x = np.vstack([s.frame[list(inputs)].to_numpy(float) for s in sets])
    return json.loads(payload(x, np.concatenate([s.y for s in sets]), inputs))


def loco_frame(sets: dict[str, LabelledSet], reg: dict[str, Signal], gate: Gate, seed: int) -> pd.DataFrame:
    """Every compared gate of ``reg`` (and the top BM25 score, the ladder's signal) on every set with both kinds of
    request: within or raw, then transferred from each other set, then pooled from all the others (module
    docstring), ``gate.resamples`` bootstrap resamples. A gate whose inputs a set lacks is left out there; G3-rel
    joins when every set carries its catalog's scale."""
    usable = {n: s for n, s in sets.items() if 0 < s.y.sum() < len(s.y)}
    if all(SCALE in s.frame for s in usable.values()):
        reg = {**reg, G3_REL.name: G3_REL}
        usable = {n: LabelledSet(relative(s.frame), s.y, s.clusters) for n, s in usable.items()}
    recs = []
    ladder = [LADDER] if LADDER in reg and LADDER not in compared_gates(reg) else []  # the reference line
    for name in compared_gates(reg) + ladder:
        g = reg[name]
        needs = list(g.inputs) or [name]
        have = {n: s for n, s in usable.items() if set(needs) <= set(s.frame.columns)}
        fits: dict[str, dict] = {}
        for test, s in have.items():
            w = cluster_weights(s.clusters, gate.resamples, seed)
            within = s.frame[name] if name in s.frame else _oof(s, g.inputs, gate.folds, seed)
            recs.append(_row(g, (test, "within" if g.inputs else "raw", test if g.inputs else "none"),
                             within.to_numpy(float), s, w))
            if not g.inputs:
                continue
            others = [n for n in have if n != test and n != SUBSETS.get(test) and SUBSETS.get(n) != test]
            for fit in others:  # a set's own fit is made once and applied to every other set
                if fit not in fits:
                    fits[fit] = _fit([have[fit]], g.inputs)
                recs.append(_row(g, (test, "transfer", fit), payload_scores(fits[fit], s.frame), s, w))
            pool = [n for n in others if SUBSETS.get(n) not in others]  # a subset adds its rows twice
            if len(pool) > 1:
                pooled = payload_scores(_fit([have[n] for n in pool], g.inputs), s.frame)
                recs.append(_row(g, (test, "pooled", " + ".join(pool)), pooled, s, w))
    return pd.DataFrame(recs, columns=COLUMNS)


def write_gate_loco(exp) -> pd.DataFrame:
    """tables/gate_loco.csv. The rule's inputs: ``signals`` (gate/signals.csv), ``catalog`` (the experiment's, for
    its scale) and ``external`` (a list: external/gate_signals.csv, or empty when the external study is off and the
    table holds the own set's rows alone); ``exp.own``: the experiment's ``name`` and its ``lexical`` ranker's
    entry."""
    inputs, gate, run, own = exp.input, exp.gate, exp.run, exp.own
    set_name = own["name"]
    scale = catalog_scale(load_catalog(inputs.catalog, run.langs), own["lexical"], run.langs, run.text)
    own = own_set(pd.read_csv(inputs.signals), gate)
    sets = {set_name: LabelledSet(own.frame.assign(**{SCALE: scale}), own.y, own.clusters)}
    external_csv = inputs.external[0] if inputs.external else None
    sets |= external_sets(pd.read_csv(external_csv)) if external_csv else {}
    table = loco_frame(sets, exp.signals, gate, run.seed)
    write_table(table, exp.output.table, "Leave one catalog out: gates fitted on one set, applied unchanged to another",
                f"Sets: {', '.join(sets)}. transfer: fit_set's gate applied unchanged; {gate.resamples} cluster "
                "resamples of the test set. g3_rel: G3 on the catalog's own scale. docs/metrics.md, 'Leave one "
                "catalog out'.",
                run.seed)
    log.info("gate_loco: %d rows over %d sets", len(table), len(sets))
    return table
