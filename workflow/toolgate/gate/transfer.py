"""Transfer without refit (gate_transfer.csv): every compared gate on the experiment's own set and on external sets,
refitted within each set and the experiment's fit applied unchanged (docs/metrics.md, 'Transfer without refit').
"""
from __future__ import annotations

import pandas as pd

from ..config import Gate
from ..core.signals import Signal, compared_gates, of_kind
from ..stats import auc_interval, cluster_weights
from ..tables import write_table

COLUMNS = ["gate", "set", "mode", "auc", "ci_low", "ci_high", "n_in", "n_out"]
EXTERNAL_SETS = ("functionchat", "bfcl_2plus")


def own_rows(signals: pd.DataFrame, reg: dict[str, Signal], set_name: str, gate: Gate, seed: int) -> pd.DataFrame:
    main = signals[signals["slice"] != "mismatch_hard"]
    y = main["in_catalog"].to_numpy()
    unit = gate.cluster_units[0]
    w = cluster_weights(main["utterance_id" if unit == "utterance" else "pair_id"].to_numpy(), gate.resamples, seed)
    recs = []
    for g in compared_gates(reg):
        value, lo, hi = auc_interval(main[g].to_numpy(), y, w)
        recs.append({"gate": g, "set": set_name, "mode": "within" if reg[g].inputs else "raw", "auc": value,
                     "ci_low": lo, "ci_high": hi, "n_in": int(y.sum()), "n_out": int((y == 0).sum())})
    return pd.DataFrame(recs, columns=COLUMNS)


def external_rows(external_gate: pd.DataFrame, reg: dict[str, Signal]) -> pd.DataFrame:
    """external_gate.csv's rows of the compared gates on the transfer sets, in gate order."""
    gates = compared_gates(reg)
    df = external_gate[external_gate["dataset"].isin(EXTERNAL_SETS) & external_gate["gate"].isin(gates)]
    df = df.rename(columns={"dataset": "set"})
    order = (df["gate"].map(gates.index) * len(EXTERNAL_SETS) + df["set"].map(EXTERNAL_SETS.index)) * 2
    order += df["mode"] == "transfer"  # within (or raw) before transfer
    return df.assign(order=order).sort_values("order", kind="stable")[COLUMNS]


def transfer_frame(signals: pd.DataFrame, external_gate: pd.DataFrame | None, reg: dict[str, Signal], set_name: str,
                   gate: Gate, seed: int) -> pd.DataFrame:
    parts = [own_rows(signals, reg, set_name, gate, seed)]
    if external_gate is not None:
        parts.append(external_rows(external_gate, reg))
    return pd.concat(parts, ignore_index=True)


def write_gate_transfer(exp) -> pd.DataFrame:
    """The rule's ``external`` input: [external_gate.csv], or empty when the experiment runs no external study; the
    own set is named after the experiment."""
    gate, reg, set_name = exp.gate, exp.signals, exp.experiment
    external = pd.read_csv(exp.input.external[0]) if exp.input.external else None
    table = transfer_frame(pd.read_csv(exp.input.signals), external, reg, set_name, gate, exp.seed)
    sets = ", ".join(dict.fromkeys(table["set"]))
    write_table(table, exp.output.table, "Transfer without refit: gates on this experiment's set and on external sets",
                f"Sets: {sets}. {set_name}: out of fold, {gate.resamples} {gate.cluster_units[0]}-cluster resamples; "
                "external sets: refitted (within) or this fit unchanged (transfer). docs/metrics.md, 'Transfer "
                "without refit'."
                + ("" if external is not None else " No external study: own set, within only."),
                exp.seed)
    return table


def _fmt(r) -> str:
    return f"{r['auc']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"


def closing_sentences(transfer: pd.DataFrame, reg: dict[str, Signal], gate: str = "g3_enc") -> list[str]:
    """Per set of gate_transfer.csv: the best single signal (G3 or an encoder gate, any mode) and where ``gate``'s
    within and transfer AUCs lie against that signal's interval, quoted from the table."""
    singles = ["g3"] + of_kind(reg, "encoder")
    out = []
    for name, d in transfer.groupby("set", sort=False):
        cand = d[d["gate"].isin(singles)]
        mine = d[d["gate"] == gate]
        if cand.empty or mine.empty:
            continue
        best = cand.loc[cand["auc"].idxmax()]
        parts = []
        for r in mine.to_dict("records"):
            where = ("inside" if best["ci_low"] <= r["auc"] <= best["ci_high"] else
                     "above" if r["auc"] > best["ci_high"] else "below")
            parts.append(f"{r['mode']} {_fmt(r)}, {where} {best['gate']}'s interval")
        out.append(f"{name}: best single signal {best['gate']} ({best['mode']}) {_fmt(best)}; {reg[gate].short} "
                   + "; ".join(parts) + ".")
    return out
