"""Where does abstention stop being retrieval? Gates and rankers by the request's overlap with its gold text.

Every in-catalog item (match, mismatch, mismatch_hard, ask included) is binned by
its character n-gram Jaccard with the gold action's text, at the quartiles of
that Jaccard over all of them (edges recorded in the table; tied edges merge
bins). For each bin: each gate's AUC of the bin's items against every
out-of-catalog item, each encoder gate minus G3 (paired), both with
utterance-cluster bootstrap 95% intervals, and each ranker's top-1.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import io
from .bootstrap import auc_measures
from .config import Gate, Run
from .datacard import jaccard_frame
from .scores import gold_ranks, load_scores, mode_note
from .signals import Signal, of_kind
from .tables import write_table

LEVEL = 0.95


def overlap_bins(jaccard: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bin index per item, edges): quartile edges, duplicates merged; the lowest bin includes its lower edge."""
    edges = np.unique(np.quantile(jaccard, [0, 0.25, 0.5, 0.75, 1]))
    if len(edges) == 1:
        return np.zeros(len(jaccard), int), np.r_[edges, edges]
    return np.clip(np.searchsorted(edges, jaccard, side="left") - 1, 0, len(edges) - 2), edges


def overlap_frame(rows, catalog, signals: pd.DataFrame, scores: dict, reg: dict[str, Signal], gate: Gate, run: Run):
    """The long table: one row per (bin, measure, name)."""
    jac = jaccard_frame(rows, catalog, run.text.ngram).set_index("utterance_id")["jaccard"]
    inrows = io.in_catalog(rows)
    bins, edges = overlap_bins(jac.loc[[r["utterance_id"] for r in inrows]].to_numpy())
    sig = signals.set_index("utterance_id")
    out_ids = signals.loc[signals["slice"] == "out", "utterance_id"].to_numpy()
    gates = [n for n in reg if n not in ("g3_no_length", "length_fitted")]
    diffs = [(e, "g3") for e in of_kind(reg, "encoder")]
    recs = []
    for b in range(len(edges) - 1):
        members = [r for r, k in zip(inrows, bins) if k == b]
        ids = np.r_[[r["utterance_id"] for r in members], out_ids]
        sub = sig.loc[ids].reset_index()
        y = sub["in_catalog"].to_numpy()
        head = {"bin": f"Q{b + 1}", "jaccard_low": edges[b], "jaccard_high": edges[b + 1], "n_in": len(members),
                "n_out": len(out_ids)}
        recs += [{**head, **m} for m in auc_measures(sub, y, sub["utterance_id"].to_numpy(), gates, diffs,
                                                      gate.resamples, run.seed, LEVEL)]
        for ranker, s in scores.items():
            ranks = gold_ranks(s, members)
            recs.append({**head, "measure": "top1", "name": ranker, "value": float((ranks == 1).mean()),
                         "ci_low": np.nan, "ci_high": np.nan})
    return pd.DataFrame(recs)


def separation_sentence(table: pd.DataFrame) -> str:
    """Where (if anywhere) an encoder gate beats G3 with an interval above 0, from the table alone."""
    d = table[table["measure"] == "auc difference"]
    if d.empty:
        return "No encoder gate to compare with G3."
    above = d[d["ci_low"] > 0]
    if above.empty:
        return ("No encoder gate separates from G3 (interval above 0) in any overlap bin: at no level of overlap "
                "does the encoder side of the paper's comparison win on this set.")
    parts = [f"{r.name} in {r.bin} (Jaccard {r.jaccard_low:.3f}-{r.jaccard_high:.3f}: {r.value:+.3f} "
             f"[{r.ci_low:.3f}, {r.ci_high:.3f}])" for r in above.itertuples()]
    return "Encoder gates separate from G3 with an interval above 0 at: " + "; ".join(parts) + "."


def write_gate_by_overlap(catalog_path, utterances_path, signals_csv, score_paths: dict, out_csv, reg: dict[str, Signal],
                          gate: Gate, run: Run):
    catalog, rows = io.load_inputs(catalog_path, utterances_path, run.langs)
    table = overlap_frame(rows, catalog, pd.read_csv(signals_csv), {n: load_scores(p) for n, p in score_paths.items()},
                          reg, gate, run)
    write_table(table, out_csv, "Gates and rankers by overlap with the gold text",
                "In-catalog items (match, mismatch, mismatch_hard, ask) binned at the quartiles of their character "
                f"{run.text.ngram}-gram Jaccard with the gold action's name + description (edges: jaccard_low, "
                "jaccard_high; tied edges merge bins); each bin's items against every out-of-catalog item. "
                f"auc: each gate; auc difference: encoder gate minus G3, paired; {gate.resamples} utterance-cluster "
                f"bootstrap resamples, {LEVEL:.0%} intervals. top1: each ranker over the catalog's actions. "
                + separation_sentence(table) + " " + mode_note(rows), run.seed)
    return table
