"""The external cross-checks: selection, gate and vocabulary overlap over each row's own candidates.

Scoring (:mod:`.scoring`) and the gate study (:mod:`.gate`) have their own
modules; this one holds selection, the Jaccard comparison and the workflow
entry ``write_external``.
"""
from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from ..config import Run
from ..core import io
from ..core.rankers import single_rankers
from ..core.text import jaccard
from ..data.card import jaccard_frame
from ..gate.bootstrap import default_differences
from ..tables import write_table
from .adapters import BFCL_RELEVANT, ExternalSet, load_all
from .gate import Comparisons, external_gate
from .scoring import row_scores, top1

log = logging.getLogger(__name__)
console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log

ITEM_COLUMNS = ["dataset", "subset", "lang", "utterance_id", "jaccard"]


# ----------------------------------------------------------------------------------------------- selection

def _selection_rows(ext: ExternalSet, dataset: str, name: str, spec: dict, run: Run) -> list[dict]:
    pred = top1(row_scores(ext, spec, run), ext.candidates)
    gold = [u["gold_tool"] for u in ext.utterances]
    conds = np.array(ext.conditions)
    recs = []
    for cond in dict.fromkeys(ext.conditions):
        m = np.flatnonzero((conds == cond) & ext.in_catalog.astype(bool))
        if not len(m):
            continue
        ncand = np.array([len(ext.candidates[i]) for i in m])
        recs.append({"dataset": dataset, "condition": cond, "ranker": name, "n": len(m),
                     "top1": float(np.mean([pred[i] == gold[i] for i in m])),
                     "mean_candidates": float(ncand.mean()), "chance": float(np.mean(1 / ncand))})
    return recs


def external_selection(rankers: dict[str, dict], sets: dict[str, ExternalSet], run: Run) -> pd.DataFrame:
    """Top-1 accuracy over each row's own candidates (ties keep candidate order).

    FunctionChat Singlecall per candidate condition, BFCL ``multiple`` and
    ``live_multiple``. Columns: dataset, condition, ranker, n, top1,
    mean_candidates, chance (mean of 1 / candidate count).
    """
    recs = []
    for name, spec in rankers.items():
        if "functionchat_singlecall" in sets:
            recs += _selection_rows(sets["functionchat_singlecall"], "functionchat", name, spec, run)
        if "bfcl" in sets:
            recs += _selection_rows(sets["bfcl"], "bfcl", name, spec, run)
    return pd.DataFrame(recs, columns=["dataset", "condition", "ranker", "n", "top1", "mean_candidates", "chance"])


# ----------------------------------------------------------------------------------------------- vocabulary overlap

def jaccard_items(ext: ExternalSet, dataset: str, conditions=None, n: int = 3) -> pd.DataFrame:
    """Character n-gram Jaccard between each in-catalog request and its gold tool's name + description."""
    tools = {t["id"]: t for t in ext.catalog}
    recs = []
    for u, cond in zip(ext.utterances, ext.conditions):
        if u["gold_tool"] is None or (conditions and cond not in conditions):
            continue
        t = tools[u["gold_tool"]]
        gold_text = f"{t['names'].get(ext.lang, '')} {t['descriptions'].get(ext.lang, '')}"
        recs.append({"dataset": dataset, "subset": cond, "lang": ext.lang, "utterance_id": u["utterance_id"],
                     "jaccard": jaccard(u["text"], gold_text, n)})
    return pd.DataFrame(recs)


def quartiles(items: pd.DataFrame) -> pd.DataFrame:
    """n, median, q1, q3 of ``jaccard`` per (dataset, lang), groups in order of first appearance."""
    recs = []
    for (dataset, lang), g in items.groupby(["dataset", "lang"], sort=False):
        q1, med, q3 = np.quantile(g["jaccard"], [0.25, 0.5, 0.75])
        recs.append({"dataset": dataset, "lang": lang, "n": len(g), "median": med, "q1": q1, "q3": q3})
    return pd.DataFrame(recs, columns=["dataset", "lang", "n", "median", "q1", "q3"])


def jaccard_external(sets: dict[str, ExternalSet], n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary, items): Jaccard medians and IQR per dataset, and the per-item values.

    FunctionChat Singlecall contributes each request once (``exact``
    condition, 100 items); BFCL contributes ``multiple`` and ``live_multiple``.
    Summary columns: dataset, lang, n, median, q1, q3, iqr.
    """
    parts = []
    if "functionchat_singlecall" in sets:
        parts.append(jaccard_items(sets["functionchat_singlecall"], "functionchat", ("exact",), n))
    if "bfcl" in sets:
        parts.append(jaccard_items(sets["bfcl"], "bfcl", BFCL_RELEVANT, n))
    items = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=ITEM_COLUMNS)
    summary = quartiles(items)
    return summary.assign(iqr=summary["q3"] - summary["q1"]), items


def _own_items(exp) -> pd.DataFrame:
    """The experiment's own Jaccard items, one dataset per slice named ``exp.own_label`` and the slice (a generated
    set: "synthetic"; else the experiment's name), shaped like the external items."""
    syn = jaccard_frame(exp.rows, exp.catalog, exp.run.text.ngram)
    syn = syn.assign(dataset=[f"{exp.own_label} {s}" for s in syn["slice"]], subset=syn["slice"])
    return syn[ITEM_COLUMNS]


# ----------------------------------------------------------------------------------------------- workflow entry

def write_external(exp) -> None:
    """All external tables, plus the synthetic set's Jaccard items beside the external ones (figure 4); ``exp``: the
    rule's :class:`toolgate.experiment.Experiment` (not imported here: it reaches routing, which reaches the
    benchmarks, which import this package).

    Outputs: named ``selection``, ``gate``, ``bootstrap`` (gate differences), ``jaccard``, ``jaccard_items`` and
    ``signals`` (every set's per-row gate signals, what gate_loco fits on). Inputs: ``catalog``, ``utterances`` and
    ``gates`` (the experiment's fits, applied unchanged).
    """
    run, gate, roles, outputs = exp.run, exp.gate, exp.roles, exp.output
    rankers = single_rankers(exp.rankers)  # hybrids: the experiment's own set only
    t0 = time.perf_counter()
    sets = load_all(exp.external, run.seed)
    console.info("adapted %s in %.1f s; selection with %s", {k: len(v.utterances) for k, v in sets.items()},
                 time.perf_counter() - t0, ", ".join(rankers))
    sel = external_selection(rankers, sets, run)
    console.info("selection done after %.1f s; gate AUCs", time.perf_counter() - t0)
    compare = Comparisons(exp.input.gates, tuple(default_differences(roles.encoder, roles.second_encoder)))
    gates, diffs, signals = external_gate(rankers, roles.lexical, sets, gate, run, compare)
    console.info("gate done after %.1f s; Jaccard overlap", time.perf_counter() - t0)
    _, items = jaccard_external(sets, run.text.ngram)
    items = pd.concat([_own_items(exp), items], ignore_index=True)
    write_table(sel, outputs.selection, "External selection: top-1 among each row's own candidates",
                "chance = mean 1 / candidates; ties keep candidate order. Mobile Actions, the paper's external set, is "
                "not obtainable offline: not rerun. docs/metrics.md, 'External cross-checks'.", run.seed,
                paper=("external.mobile_actions.",))
    write_table(gates, outputs.gate, "External gate AUC: in vs out over each row's own candidates",
                "FunctionChat CallDecision CALL vs REJECT, BFCL relevant vs irrelevant; modes raw, within, transfer; "
                f"{gate.resamples} cluster resamples. bfcl_2plus: rows with two or more candidates. docs/metrics.md, "
                "'External cross-checks'.", run.seed)
    write_table(diffs, outputs.bootstrap, "External gate differences: paired AUC differences, in vs out",
                f"bootstrap.csv's differences on each external set, {gate.resamples} resamples of its own clusters. "
                "docs/metrics.md, 'External cross-checks'.", run.seed)
    write_table(quartiles(items), outputs.jaccard, "Character 3-gram Jaccard of requests with their gold tool",
                f"The experiment's own slices ({exp.own_label}) beside the external sets. Mobile Actions, the paper's "
                "external set, is not obtainable offline: not rerun. docs/metrics.md, 'External cross-checks'.",
                run.seed, paper=("jaccard.",))
    io.write_atomic(outputs.jaccard_items, items.to_csv(index=False, float_format="%.6f", lineterminator="\n"))
    io.write_atomic(outputs.signals, signals.to_csv(index=False, float_format="%.10g", lineterminator="\n"))
