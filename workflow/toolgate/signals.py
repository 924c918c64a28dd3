"""The gate signals, declared once: name, kind, labels, scale and the ranker that produced each.

Gate, calibration, routing, bootstrap, plots, claims and the report read this
registry; none of them decodes a signal's meaning from its name or label.
"""
from __future__ import annotations

from dataclasses import dataclass

SCORE_FEATURES = ("top_score", "raw_margin", "norm_margin", "score_over_mean", "topk_entropy", "score_per_term")
FEATURES = SCORE_FEATURES + ("length",)


@dataclass(frozen=True)
class Signal:
    name: str                 # column of signals.csv, row of gate_auc.csv
    kind: str                 # score_feature | length | fitted | encoder
    label: str                # gate_auc.csv's description
    short: str                # legend text in figures
    log_odds: bool = False    # the value is log-odds (probability = sigmoid); else a cosine (clipped to [0, 1])
    ranker: str | None = None  # the ranker whose scores it is computed from


def registry(lexical: str, encoders) -> dict[str, Signal]:
    """Every signal of the gate study, in gate_auc.csv's row order."""
    sigs = [Signal(f, "score_feature", "BM25 score feature (raw)", f.replace("_", " "), ranker=lexical)
            for f in SCORE_FEATURES]
    sigs += [Signal("length", "length", "query length (raw)", "query length (raw)"),
             Signal("length_fitted", "fitted", "query length (fitted out of fold)", "query length", log_odds=True),
             Signal("g3", "fitted", "G3: 7 features (out of fold)", "G3 (BM25 score features)", True, lexical),
             Signal("g3_no_length", "fitted", "G3 without length = six score features (out of fold)",
                    "G3 without length", True, lexical)]
    sigs += [encoder_signal(e) for e in encoders]
    return {s.name: s for s in sigs}


def encoder_signal(ranker: str) -> Signal:
    """An encoder gate: the maximum cosine between the request and the catalog's actions."""
    return Signal(f"{ranker}_maxcos", "encoder", "encoder gate: max cosine (raw)", f"{ranker} (max cosine)",
                  ranker=ranker)


def studied_gates(reg: dict[str, Signal]) -> list[str]:
    """The gates of calibration and operating points: G3, fitted length and every encoder."""
    return ["g3", "length_fitted"] + [s.name for s in reg.values() if s.kind == "encoder"]


def of_kind(reg: dict[str, Signal], kind: str) -> list[str]:
    return [s.name for s in reg.values() if s.kind == kind]


def gate_signal(reg: dict[str, Signal], gate: str) -> Signal:
    """A config's gate (``g3`` or a dense ranker's name) as its signal."""
    if gate in reg:
        return reg[gate]
    for s in reg.values():
        if s.kind == "encoder" and s.ranker == gate:
            return s
    raise KeyError(f"no gate signal for '{gate}' (known: {', '.join(reg)})")


def signal_rows(signals, rows):
    """signals.csv's rows (a DataFrame) in the order of the utterance ``rows``."""
    pos = {u: i for i, u in enumerate(signals["utterance_id"])}
    return signals.iloc[[pos[r["utterance_id"]] for r in rows]]
