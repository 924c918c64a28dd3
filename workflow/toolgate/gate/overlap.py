"""Where does abstention stop being retrieval? Gates and rankers by the request's overlap with the catalog's text:
in-catalog items binned by their Jaccard with the gold text (gate_by_overlap.csv), and by out-of-catalog overlap
too (gate_overlap_map.csv). docs/metrics.md, 'Gates and rankers by overlap' and 'The overlap map'.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Gate, Run
from ..core import text
from ..core.catalog import actions
from ..core.scores import gold_ranks, mode_note
from ..core.signals import Signal, of_kind
from ..data.card import gold_text, jaccard_frame
from ..tables import write_table
from ..utterances import in_catalog
from .bootstrap import Resamples, auc_measures, difference_label

LEVEL = 0.95
MIN_ITEMS = 10  # a map cell with fewer items on either side gets no AUC: its interval would span most of [0, 1]


def overlap_bins(jaccard: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bin index per item, edges): quartile edges, duplicates merged; the lowest bin includes its lower edge."""
    edges = np.unique(np.quantile(jaccard, [0, 0.25, 0.5, 0.75, 1]))
    if len(edges) == 1:
        return np.zeros(len(jaccard), int), np.r_[edges, edges]
    return np.clip(np.searchsorted(edges, jaccard, side="left") - 1, 0, len(edges) - 2), edges


def in_catalog_bins(rows, catalog, ngram: int) -> tuple[list[dict], np.ndarray, np.ndarray]:
    """(in-catalog rows, bin per row, edges): the quartile bins of each row's Jaccard with its gold action's text."""
    jac = jaccard_frame(rows, catalog, ngram).set_index("utterance_id")["jaccard"]
    inrows = in_catalog(rows)
    return inrows, *overlap_bins(jac.loc[[r["utterance_id"] for r in inrows]].to_numpy())


def overlap_frame(exp):
    """The long table: one row per (bin, measure, name), from the experiment's catalog, utterances, gate signals
    (the rule's ``signals`` input) and every ranker's scores."""
    gate, run, reg = exp.gate, exp.run, exp.signals
    signals = pd.read_csv(exp.input.signals)
    scores = {n: exp.scores(n) for n in exp.score_paths}
    inrows, bins, edges = in_catalog_bins(exp.rows, exp.catalog, run.text.ngram)
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
                                                      Resamples(gate.resamples, run.seed, LEVEL))]
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


def write_gate_by_overlap(exp):
    gate, run = exp.gate, exp.run
    table = overlap_frame(exp)
    write_table(table, exp.output.table, "Gates and rankers by overlap with the gold text",
                f"In-catalog bins by character {run.text.ngram}-gram Jaccard with the gold text, each against every "
                f"out item; {gate.resamples} cluster resamples. Where encoders separate from G3: report.md. "
                "docs/metrics.md, 'Gates and rankers by overlap'. " + mode_note(exp.rows), run.seed)
    return table


def max_action_jaccard(rows, catalog, ngram: int) -> np.ndarray:
    """Each row's highest Jaccard with the text of any action it sees (its ``candidates``, else every action),
    the texts of :func:`jaccard_frame` (name + description in the row's language)."""
    acts = {t["id"]: t for t in actions(catalog)}
    return np.array([max((text.jaccard(r["text"], gold_text(acts[a], r["lang"]), ngram)
                          for a in (r.get("candidates") or acts) if a in acts), default=0.0) for r in rows])


def _bin_columns(side: str, k: int, edges: np.ndarray) -> dict:
    return {f"{side}_bin": f"Q{k + 1}", f"{side}_jaccard_low": edges[k], f"{side}_jaccard_high": edges[k + 1]}


def overlap_map_frame(rows, catalog, signals: pd.DataFrame, reg: dict[str, Signal], gate: Gate, run: Run):
    """The map's long table: one row per (in-bin, out-bin, measure, name); cells under MIN_ITEMS a side are NaN."""
    inrows, in_bins, in_edges = in_catalog_bins(rows, catalog, run.text.ngram)
    outrows = [r for r in rows if r["slice"] == "out"]
    in_ids, out_ids = (np.array([r["utterance_id"] for r in rs]) for rs in (inrows, outrows))
    out_bins, out_edges = overlap_bins(max_action_jaccard(outrows, catalog, run.text.ngram))
    encoders = of_kind(reg, "encoder")
    names, diffs = ["g3"] + encoders, [(e, "g3") for e in encoders]
    blank = ([{"measure": "auc", "name": n} for n in names]
             + [{"measure": "auc difference", "name": difference_label(a, b)} for a, b in diffs])
    sig = signals.set_index("utterance_id")
    recs = []
    for i in range(len(in_edges) - 1):
        for o in range(len(out_edges) - 1):
            ids = np.r_[in_ids[in_bins == i], out_ids[out_bins == o]]
            head = {**_bin_columns("in", i, in_edges), **_bin_columns("out", o, out_edges),
                    "n_in": int((in_bins == i).sum()), "n_out": int((out_bins == o).sum())}
            if min(head["n_in"], head["n_out"]) < MIN_ITEMS:
                recs += [{**head, **m, "value": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                          "note": f"fewer than {MIN_ITEMS} items on a side"} for m in blank]
                continue
            sub = sig.loc[ids].reset_index()
            recs += [{**head, **m, "note": ""} for m in auc_measures(
                sub, sub["in_catalog"].to_numpy(), sub["utterance_id"].to_numpy(), names, diffs,
                Resamples(gate.resamples, run.seed, LEVEL))]
    return pd.DataFrame(recs)


def _ranges(cells: pd.DataFrame, side: str) -> str:
    b = cells.drop_duplicates(f"{side}_bin")
    return ", ".join(f"{r[0]} {r[1]:.3f}-{r[2]:.3f}" for r in b[[f"{side}_bin", f"{side}_jaccard_low",
                                                                 f"{side}_jaccard_high"]].itertuples(index=False))


def _cells(d: pd.DataFrame) -> str:
    return "; ".join(f"in {r.in_bin} x out {r.out_bin} {r.value:+.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"
                     for r in d.itertuples())


def map_paragraph(table: pd.DataFrame) -> str:
    """The report's paragraph on gate_overlap_map.csv, from the table alone: for each encoder gate, the cells where
    its difference from G3 has an interval above 0 (the encoder side wins) and below 0 (G3 wins)."""
    d = table[table["measure"] == "auc difference"]
    if d.empty:
        return "No encoder gate to compare with G3 on the overlap map."
    cells = table.drop_duplicates(["in_bin", "out_bin"])
    parts = []
    for name, e in d.dropna(subset=["value"]).groupby("name", sort=False):
        won, lost = e[e["ci_low"] > 0], e[e["ci_high"] < 0]
        parts.append(f"{name}: the encoder side wins in {len(won)} of {len(e)} cells"
                     + (f" ({_cells(won)})" if len(won) else "") + f", G3 in {len(lost)}"
                     + (f" ({_cells(lost)})" if len(lost) else ""))
    head = (f"On the overlap map (in-catalog bins of the Jaccard with the gold text: {_ranges(cells, 'in')}; "
            f"out-of-catalog bins of the highest Jaccard with any action: {_ranges(cells, 'out')}; "
            f"{cells['value'].notna().sum()} of {len(cells)} cells with at least {MIN_ITEMS} items a side)")
    if not parts:
        return head + ", no cell has enough items to compare an encoder gate with G3."
    return head + ", encoder gate minus G3 AUC with 95% intervals: " + "; ".join(parts) + \
        ". In the other cells the interval contains 0."


def write_gate_overlap_map(exp):
    gate, run, rows = exp.gate, exp.run, exp.rows
    table = overlap_map_frame(rows, exp.catalog, pd.read_csv(exp.input.signals), exp.signals, gate, run)
    write_table(table, exp.output.table, "Gates on the overlap map: in-catalog overlap bin x out-of-catalog overlap bin",
                f"In-catalog bins (rows) x out-of-catalog bins (columns) of character {run.text.ngram}-gram Jaccard; "
                f"cells under {MIN_ITEMS} items a side are NaN. Cells where an encoder gate beats G3: report.md. "
                "docs/metrics.md, 'The overlap map'. " + mode_note(rows), run.seed)
    return table
