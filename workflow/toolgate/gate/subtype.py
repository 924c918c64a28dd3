"""Out of catalog is not one population: every gate against each out-of-catalog subtype (issue 24).

Gates treat the subtypes very differently: a multistep request names catalog actions, so a catalog-similarity gate
scores it as in catalog. docs/metrics.md, 'Gates by out-of-catalog subtype'.
"""
from __future__ import annotations

import logging

import pandas as pd

from ..config import Gate
from ..core.signals import Signal, of_kind
from ..tables import write_table
from ..utterances import OUT_SUBTYPES
from .bootstrap import NO_SLICE, Resamples, auc_measures, difference_label, slice_title

console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log
LEVEL = 0.95
IN_SLICES = ("match", "mismatch", "mismatch_hard")


def out_subtypes(subtypes) -> list[str]:
    """The out subtypes present: the generator's in its order, then any other the data declares, sorted."""
    known = list(OUT_SUBTYPES)
    return sorted(set(subtypes), key=lambda s: (known.index(s) if s in known else len(known), s))


def in_groups(inside: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The in-catalog side of each comparison by slice label; without a mismatch slice, every in-catalog item too."""
    groups = {s: inside[inside["slice"] == s] for s in IN_SLICES if (inside["slice"] == s).any()}
    if "mismatch" not in groups:  # e.g. FunctionChat: no vocabulary split
        groups[NO_SLICE] = inside
    return groups


def subtype_frame(signals: pd.DataFrame, subtype: dict[str, str], reg: dict[str, Signal], gate: Gate,
                  seed: int) -> pd.DataFrame:
    """One row per (cluster unit, in slice, out subtype, measure, name). ``subtype``: utterance id -> subtype."""
    df = signals.assign(subtype=signals["utterance_id"].map(subtype))
    inside, out = df[df["in_catalog"] == 1], df[df["slice"] == "out"]
    diffs = [(e, "g3") for e in of_kind(reg, "encoder")]
    recs = []
    for unit in gate.cluster_units:
        for label, ins in in_groups(inside).items():
            console.info("%s clusters, %s in against each out subtype (%d resamples)", unit, label, gate.resamples)
            for st in out_subtypes(out["subtype"]):
                sub = pd.concat([ins, out[out["subtype"] == st]], ignore_index=True)
                y = sub["in_catalog"].to_numpy()
                head = {"cluster_unit": unit, "in_slice": label, "out_subtype": st, "n_in": int(y.sum()),
                        "n_out": int((y == 0).sum())}
                clusters = sub["utterance_id" if unit == "utterance" else "pair_id"].to_numpy()
                recs += [{**head, **m} for m in auc_measures(sub, y, clusters, list(reg), diffs,
                                                              Resamples(gate.resamples, seed, LEVEL))]
    return pd.DataFrame(recs)


def deciding_subtype_sentence(table: pd.DataFrame, unit: str = "utterance") -> str:
    """Which out subtype decides the claim "each encoder gate beats G3 on mismatch-in vs out", in one sentence.

    Read from gate_by_subtype.csv's encoder - G3 rows on mismatch-in (every in-catalog item where the set has no
    mismatch slice) and ``unit`` clusters. The claim needs every interval above 0, so the deciding subtype is the
    one with the lowest interval end over the encoder gates: where the claim fails if it fails anywhere, and its
    narrowest margin if it holds everywhere.
    """
    d = table[(table["measure"] == "auc difference") & (table["cluster_unit"] == unit)
              & table["in_slice"].isin(["mismatch", NO_SLICE])]
    if d.empty:
        return f"gate_by_subtype.csv has no encoder - G3 rows on mismatch-in vs out with {unit} clusters."
    low = d.groupby("out_subtype", sort=False)["ci_low"].min()
    decider = low.idxmin()
    wins = [s for s, v in low.items() if v > 0]
    fails = [s for s, v in low.items() if v <= 0]
    detail = "; ".join(f"{r.name} {r.value:+.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"
                       for r in d[d["out_subtype"] == decider].itertuples())
    if not fails:
        held = f"against every out subtype ({', '.join(wins)})"
    elif wins:
        held = f"against {', '.join(wins)} but not against {', '.join(fails)}"
    else:
        held = f"against no out subtype (it fails against {', '.join(fails)})"
    return (f'The claim "each encoder gate beats G3 on {slice_title(d["in_slice"].iloc[0])}" (every encoder - G3 '
            f"interval above 0), split by out subtype ({unit} clusters), holds {held}; {decider} decides it, with the "
            f"lowest interval: {detail}.")


def write_gate_by_subtype(exp):
    gate = exp.gate
    table = subtype_frame(pd.read_csv(exp.input.signals), {r["utterance_id"]: r["subtype"] for r in exp.rows},
                          exp.signals, gate, exp.seed)
    diff = difference_label("<encoder gate>", "g3")
    write_table(table, exp.output.table, "Gates by out-of-catalog subtype: each in-catalog slice vs each out subtype",
                f"Each in-catalog slice against the out items of one declared subtype; auc difference ({diff}) paired; "
                f"{gate.resamples} cluster resamples per cluster_unit, {LEVEL:.0%} intervals. The deciding subtype: "
                "report.md's claims. docs/metrics.md, 'Gates by out-of-catalog subtype'.", exp.seed)
    return table
