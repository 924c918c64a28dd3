"""The gate signals, declared once: name, kind, labels, scale, inputs and the ranker that produced each.

Gate, calibration, routing, bootstrap, plots, claims and the report read this
registry; none of them decodes a signal's meaning from its name or label. A
fitted signal names the signals it is fitted on (``inputs``): the gate study
fits it out of fold on them, the external study within each set and, unchanged,
from the experiment's fit (transfer).
"""
from __future__ import annotations

from dataclasses import dataclass

SCORE_FEATURES = ("top_score", "raw_margin", "norm_margin", "score_over_mean", "topk_entropy", "score_per_term")
FEATURES = SCORE_FEATURES + ("length",)
ENCODER_KINDS = ("encoder", "encoder_feature", "agreement", "exemplar")  # raw signals computed from embeddings


@dataclass(frozen=True)
class Signal:
    name: str                 # column of signals.csv, row of gate_auc.csv
    kind: str                 # score_feature | length | fitted | encoder | encoder_feature | agreement | exemplar
    label: str                # gate_auc.csv's description
    short: str                # legend text in figures
    log_odds: bool = False    # the value is log-odds (probability = sigmoid); else a cosine (clipped to [0, 1])
    ranker: str | None = None  # the ranker whose scores it is computed from
    inputs: tuple[str, ...] = ()  # fitted: the signals its balanced logistic regression reads
    compared: bool = False    # a gate of gate_comparison.csv and gate_transfer.csv


def registry(lexical: str, encoders) -> dict[str, Signal]:
    """Every signal of the gate study, in gate_auc.csv's row order (the paper's first, then gate study v2's)."""
    sigs = [Signal(f, "score_feature", "BM25 score feature (raw)", f.replace("_", " "), ranker=lexical)
            for f in SCORE_FEATURES]
    sigs += [Signal("length", "length", "query length (raw)", "query length (raw)"),
             Signal("length_fitted", "fitted", "query length (fitted out of fold)", "query length", log_odds=True,
                    inputs=("length",)),
             Signal("g3", "fitted", "G3: 7 features (out of fold)", "G3 (BM25 score features)", True, lexical,
                    FEATURES, compared=True),
             Signal("g3_no_length", "fitted", "G3 without length = six score features (out of fold)",
                    "G3 without length", True, lexical, SCORE_FEATURES)]
    sigs += [encoder_signal(e) for e in encoders]
    return {s.name: s for s in sigs + study_v2(lexical, list(encoders))}


def encoder_signal(ranker: str) -> Signal:
    """An encoder gate: the maximum cosine between the request and the catalog's actions."""
    return Signal(f"{ranker}_maxcos", "encoder", "encoder gate: max cosine (raw)", f"{ranker} (max cosine)",
                  ranker=ranker, compared=True)


def encoder_features(ranker: str) -> tuple[Signal, Signal, Signal]:
    """(max cosine, top-1 minus top-2 cosine, mean of the top-k cosines) over the actions: G3+enc's inputs."""
    return (encoder_signal(ranker),
            Signal(f"{ranker}_margin", "encoder_feature", "encoder top-1 minus top-2 cosine (raw)",
                   f"{ranker} cosine margin", ranker=ranker),
            Signal(f"{ranker}_topk_mean", "encoder_feature", "encoder mean of the top-k cosines (raw)",
                   f"{ranker} top-k mean cosine", ranker=ranker))


def agreement_signals(lexical: str, ranker: str) -> tuple[Signal, Signal]:
    """(the lexical and the encoder top-1 agree, reciprocal rank of the lexical top-1 in the encoder's order)."""
    return (Signal(f"{ranker}_agrees", "agreement", f"{lexical} and encoder top-1 agree (raw, 0/1)",
                   f"{lexical} = {ranker} top-1", ranker=ranker, compared=True),
            Signal(f"{ranker}_{lexical}_rr", "agreement", f"reciprocal rank of {lexical}'s top-1 in the encoder's "
                   "order (raw)", f"{lexical} top-1 RR in {ranker}", ranker=ranker, compared=True))


def exemplar_signals(ranker: str) -> tuple[Signal, Signal]:
    """(exemplar kNN, exemplar kNN fitted with the catalog-text max cosine)."""
    knn = Signal(f"{ranker}_knn", "exemplar", "exemplar kNN: max cosine to the training folds' in-catalog requests "
                 "(out of fold)", f"{ranker} exemplar kNN", ranker=ranker, compared=True)
    both = Signal(f"{ranker}_knn_catalog", "fitted", "exemplar kNN + catalog max cosine (fitted out of fold)",
                  f"{ranker} kNN + catalog", True, ranker, (knn.name, encoder_signal(ranker).name), compared=True)
    return knn, both


def study_v2(lexical: str, encoders: list[str]) -> list[Signal]:
    """Gate study v2: encoder features, rank agreement, exemplar kNN and the gates fitted on them."""
    if not encoders:
        return []
    feats = [s for e in encoders for s in encoder_features(e)]
    agree = [s for e in encoders for s in agreement_signals(lexical, e)]
    exemplar = [exemplar_signals(e) for e in encoders]
    g3_enc = Signal("g3_enc", "fitted", "G3+enc: G3's 7 features + each encoder's max cosine, margin and top-k mean "
                    "(out of fold)", "G3+enc", True, lexical, FEATURES + tuple(s.name for s in feats), compared=True)
    rank = Signal("rank_agreement", "fitted", "rank agreement: each encoder's top-1 agreement and reciprocal rank "
                  "(out of fold)", "rank agreement", True, lexical, tuple(s.name for s in agree), compared=True)
    return ([s for s in feats if s.kind == "encoder_feature"] + agree + [k for k, _ in exemplar] + [g3_enc]
            + [b for _, b in exemplar] + [rank])


def studied_gates(reg: dict[str, Signal]) -> list[str]:
    """The gates of calibration and operating points: G3, fitted length and every encoder."""
    return ["g3", "length_fitted"] + [s.name for s in reg.values() if s.kind == "encoder"]


def compared_gates(reg: dict[str, Signal]) -> list[str]:
    """The gates of gate_comparison.csv and gate_transfer.csv: G3, every encoder and gate study v2's gates."""
    return [s.name for s in reg.values() if s.compared]


def fitted(reg: dict[str, Signal]) -> list[Signal]:
    return [s for s in reg.values() if s.inputs]


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


def gate_inputs(reg: dict[str, Signal], name: str) -> list[Signal]:
    """The raw signals a gate reads, itself or through its inputs, in registry order."""
    raw, todo = set(), [name]
    while todo:
        s = reg[todo.pop()]
        todo += list(s.inputs)
        if not s.inputs:
            raw.add(s.name)
    return [s for s in reg.values() if s.name in raw]


def gate_encoders(reg: dict[str, Signal], name: str) -> list[str]:
    """The encoders (ranker names) whose embeddings a gate reads, in registry order; score features and length read
    only the lexical ranker."""
    return list(dict.fromkeys(s.ranker for s in gate_inputs(reg, name) if s.kind in ENCODER_KINDS))


def signal_rows(signals, rows):
    """signals.csv's rows (a DataFrame) in the order of the utterance ``rows``."""
    pos = {u: i for i, u in enumerate(signals["utterance_id"])}
    return signals.iloc[[pos[r["utterance_id"]] for r in rows]]
