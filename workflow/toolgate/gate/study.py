"""The abstention gate study (paper Sections 4-5, Table 4): in-catalog against out-of-catalog requests by slice.

Every fitted signal is out of fold, folds grouped by ``pair_id`` so a request and its translation never sit on both
sides; mismatch_hard rows are only predicted. docs/metrics.md, 'Gate signals', defines each signal."""
from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd

from ..config import Gate, Run
from ..core import io
from ..core.inputs import query_lengths, raw_signals
from ..core.models import fit_signals, payloads
from ..core.rankers import query_embeddings
from ..core.scores import Scores, mode_note
from ..core.signals import FEATURES, Signal, registry
from ..metrics import auc
from ..stats import main_folds
from ..tables import write_table
from ..utterances import is_in_catalog

log = logging.getLogger(__name__)
PAPER_KEYS = ("gate.",)


def slice_masks(rows: list[dict]) -> dict[str, np.ndarray]:
    """Evaluation slices: overall is the main set (in vs out); mismatch_hard only where the set has it."""
    sl = np.array([r["slice"] for r in rows])
    masks = {"overall": sl != "mismatch_hard", "match": np.isin(sl, ["match", "out"]),
             "mismatch": np.isin(sl, ["mismatch", "out"])}
    if (sl == "mismatch_hard").any():
        masks["mismatch_hard"] = np.isin(sl, ["mismatch_hard", "out"])
    return masks


def length_matched(rows, lengths: np.ndarray, seed: int) -> np.ndarray:
    """Mismatch and out items paired one to one by length within each language (caliper: 15%, at least 2 n-grams).

    Mismatch items are taken in a seeded random order, each with the unused out item of the nearest length
    inside the caliper, so the two sides of the returned mask have matched length distributions.
    """
    sl, lang = np.array([r["slice"] for r in rows]), np.array([r["lang"] for r in rows])
    mask = np.zeros(len(rows), bool)
    for k, lg in enumerate(sorted(set(lang))):
        free = list(np.flatnonzero((sl == "out") & (lang == lg)))
        for i in np.random.default_rng([seed, k]).permutation(np.flatnonzero((sl == "mismatch") & (lang == lg))):
            gap = [abs(lengths[j] - lengths[i]) for j in free]
            if gap and min(gap) <= max(2, 0.15 * lengths[i]):
                mask[[i, free.pop(int(np.argmin(gap)))]] = True
    return mask


def study_masks(rows, lengths: np.ndarray, y: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """The evaluation slices of gate_auc.csv, the length-matched one where there is a mismatch slice."""
    masks = slice_masks(rows)
    if (masks["mismatch"] & (y == 1)).any():
        masks["mismatch_length_matched"] = length_matched(rows, lengths, seed)
    return masks


def candidate_lists(rows, scores: Scores) -> tuple:
    """(gold tools, candidate lists) for exemplar kNN when rows have their own candidates, else ()."""
    if not any(r.get("candidates") for r in rows):
        return ()
    every = list(scores.action_ids)
    return [r["gold_tool"] for r in rows], [r.get("candidates") or every for r in rows]


class GateStudy:
    """All gate signals for one utterance set; every array is aligned with ``rows``.

    ``embeddings``: each encoder's request embeddings (rows in ``rows``' order), for exemplar kNN.
    """

    def __init__(self, rows, lexical: tuple[str, Scores], encoders: dict[str, Scores], embeddings: dict[str, np.ndarray],
                 gate: Gate, run: Run):
        lexical_name, lexical = lexical
        self.rows, self.seed = rows, run.seed
        self.y = np.array([is_in_catalog(r["gold_outcome"]) for r in rows], int)
        self.groups = np.array([r["pair_id"] for r in rows])
        lengths = query_lengths([r["text"] for r in rows], run.text)
        lex = lexical.for_rows(rows).action_scores()
        self.masks = study_masks(rows, lengths, self.y, run.seed)
        self.folds = main_folds(self.y, self.groups, ~self.masks["overall"], gate.folds, run.seed)
        self.registry: dict[str, Signal] = registry(lexical_name, list(encoders))
        matrices = {}
        for name, s in encoders.items():
            s = s.for_rows(rows)
            if list(s.action_ids) != list(lexical.action_ids):
                raise ValueError(f"{name} and {lexical_name} score different actions")
            matrices[name] = (s.action_scores(), embeddings[name])
        raw = raw_signals((lexical_name, lex), matrices, lengths, (self.y, self.groups, self.folds), gate.top_k,
                          candidate_lists(rows, lexical))
        self.raw = raw  # every raw signal, the fitted gates' inputs
        fits = fit_signals(raw, self.registry, self.y, self.folds)
        self.signals: dict[str, np.ndarray] = {n: fits[n] if n in fits else raw[n].to_numpy() for n in self.registry}
        main = self.masks["overall"]
        self.payloads = payloads(raw[main], self.registry, self.y[main])
        self.payload = json.dumps(self.payloads["g3"], separators=(",", ":"))

    def auc_frame(self) -> pd.DataFrame:
        recs = []
        for name, sig in self.signals.items():
            rec = {"signal": name, "kind": self.registry[name].label}
            for sl, m in self.masks.items():
                rec[f"auc_{sl}"] = auc(sig[m], self.y[m])
            rec["n_in_mismatch"] = int((self.y[self.masks["mismatch"]] == 1).sum())
            if "mismatch_length_matched" in self.masks:
                rec["n_length_matched_pairs"] = int(self.masks["mismatch_length_matched"].sum() // 2)
            rec["n_out"] = int((self.y == 0).sum())
            recs.append(rec)
        return pd.DataFrame(recs)


def load_study(exp) -> GateStudy:
    """The study of the experiment's utterances: its rankers are the lexical one and every encoder, whose ``specs``
    (their ``rankers:`` entries) say where the scores rule cached their request embeddings."""
    rows, run, lexical = exp.rows, exp.run, exp.roles.lexical
    encoders = {n: exp.scores(n) for n in exp.score_paths if n != lexical}
    texts = [r["text"] for r in rows]  # the scores rule's order, so its cached embeddings are found
    embeddings = {n: query_embeddings(exp.specs[n], texts, run) for n in encoders}
    return GateStudy(rows, (lexical, exp.scores(lexical)), encoders, embeddings, exp.gate, run)


def write_signals(study: GateStudy, path) -> None:
    """Per-utterance gate signals (the input of bootstrap, calibration and operating points)."""
    df = pd.DataFrame({"utterance_id": [r["utterance_id"] for r in study.rows], "pair_id": study.groups,
                       "slice": [r["slice"] for r in study.rows], "in_catalog": study.y,
                       "fold": _fold_ids(study), **study.signals})
    io.write_atomic(path, df.to_csv(index=False, float_format="%.10g", lineterminator="\n"))


def _fold_ids(study: GateStudy) -> np.ndarray:
    out = np.zeros(len(study.y), int)
    for f, (_, test) in enumerate(study.folds):
        out[test] = f
    return out


def write_gate_auc(exp) -> pd.DataFrame:
    """The rule's outputs: the per-utterance ``signals``, gate_auc.csv (``table``), G3's ``payload`` (g3.json) and
    every fitted gate's payload (``gates``: gates.json, what transfer applies)."""
    study, out = load_study(exp), exp.output
    write_signals(study, out.signals)
    df = study.auc_frame()
    io.write_atomic(out.payload, study.payload + "\n")
    io.write_atomic(out.gates, json.dumps(study.payloads, indent=1) + "\n")
    n_bytes = len(study.payload.encode())
    g3 = df["signal"] == "g3"
    df.loc[g3, "parameters"] = len(FEATURES) + 1
    df.loc[g3, "payload_bytes"] = n_bytes
    write_table(df, out.table, "Gate AUC: in-catalog vs out (paper Table 4)",
                "Raw signals are not re-oriented (below 0.5 stays visible); fitted gates out of fold, folds grouped "
                "by pair. docs/metrics.md, 'Gate signals'. "
                f"{mode_note(study.rows)}", study.seed, paper=PAPER_KEYS)
    return df
