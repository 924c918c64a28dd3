"""The mood model's data and measure: fitted on the bank of request frames (data/lang/mood_bank.jsonl), its command
threshold chosen out of fold on the bank alone, shipped beside the language data (``toolgate mood``), and its
per-frame precision and recall by language on the bank's held-out folds (tables/mood.csv); the hand reader's
Korean conditions against Kiwi's (tables/kiwi_agreement.csv), as BM25 is checked against rank_bm25."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import io
from ..core.artifact import sha256
from ..core.errors import InputError, MissingExtra, require
from ..core.mood import FRAMES, MoodModel, conditions
from ..tables import write_table

FOLDS = 5
# The command threshold is the largest of these whose out-of-fold command recall reaches COMMAND_RECALL in every
# language: a real command must rarely be read as talk, since the model only ever keeps a request from executing.
THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(1, 11))
COMMAND_RECALL = 0.97


def read_bank(path) -> list[dict]:
    """The bank's rows (text, lang, frame, phrase); InputError names a row whose frame is unknown."""
    rows = []
    for lineno, r in io.read_jsonl(path):
        if r.get("frame") not in FRAMES or r.get("lang") not in io.LANGS or not isinstance(r.get("text"), str):
            raise InputError(path, f"a bank row is {{text, lang: {'/'.join(io.LANGS)}, frame: one of {', '.join(FRAMES)}"
                                   ", phrase}", lineno)
        rows.append(r)
    return rows


def out_of_fold(rows: list[dict], seed: int, c: float) -> np.ndarray:
    """(rows x FRAMES) each row's probabilities under a model fitted without its verb phrase's fold: folds are drawn
    over (language, phrase), so no sentence of a held-out phrase is seen in fitting."""
    groups = sorted({(r["lang"], r.get("phrase", r["text"])) for r in rows})
    order = np.random.default_rng(seed).permutation(len(groups))
    fold_of = {g: int(k % FOLDS) for g, k in zip(groups, np.argsort(order))}
    folds = np.array([fold_of[(r["lang"], r.get("phrase", r["text"]))] for r in rows])
    out = np.zeros((len(rows), len(FRAMES)))
    for k in range(FOLDS):
        fit, held = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
        model = MoodModel.fit([rows[i]["text"] for i in fit], [rows[i]["frame"] for i in fit], c)
        p = model.proba([rows[i]["text"] for i in held])
        out[held] = p[:, [model.classes.index(f) for f in FRAMES]]
    return out


def command_threshold(rows: list[dict], proba: np.ndarray) -> float:
    """The largest of THRESHOLDS at which the command frame's out-of-fold recall reaches COMMAND_RECALL in every
    language (the smallest when none does)."""
    lang, command = np.array([r["lang"] for r in rows]), np.array([r["frame"] == "command" for r in rows])
    ok = [t for t in THRESHOLDS if all((proba[(lang == lg) & command, 0] >= t).mean() >= COMMAND_RECALL
                                       for lg in sorted(set(lang)))]
    return max(ok, default=THRESHOLDS[0])


def frames_read(proba: np.ndarray, threshold: float) -> np.ndarray:
    """The frame each row is read as: command at or above the threshold, else the most probable other frame."""
    other = np.array(FRAMES[1:])[proba[:, 1:].argmax(1)]
    return np.where(proba[:, 0] >= threshold, "command", other)


def mood_table(rows: list[dict], seed: int, c: float) -> tuple[pd.DataFrame, float]:
    """(per language and frame: n, precision, recall out of fold; the command threshold)."""
    proba = out_of_fold(rows, seed, c)
    threshold = command_threshold(rows, proba)
    read, gold = frames_read(proba, threshold), np.array([r["frame"] for r in rows])
    lang = np.array([r["lang"] for r in rows])
    recs = []
    for lg in sorted(set(lang)):
        for f in FRAMES:
            g, p = (gold == f) & (lang == lg), (read == f) & (lang == lg)
            recs.append({"lang": lg, "frame": f, "n": int(g.sum()), "precision": (g & p).sum() / max(p.sum(), 1),
                         "recall": (g & p).sum() / max(g.sum(), 1)})
    return pd.DataFrame(recs), threshold


def fit_shipped(bank, out, seed: int, c: float) -> float:
    """Fit the model on the whole bank with the threshold chosen out of fold, and write it to ``out`` (npz), with the
    bank's sha256 (a test holds the shipped model to the bank in the checkout)."""
    rows = read_bank(bank)
    threshold = command_threshold(rows, out_of_fold(rows, seed, c))
    model = MoodModel.fit([r["text"] for r in rows], [r["frame"] for r in rows], c, threshold)
    tmp = Path(out).with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **model.arrays(), bank_sha256=np.array(sha256(Path(bank).read_bytes())))
    os.replace(tmp, out)
    return threshold


def write_mood_table(bank, table, seed: int, c: float) -> pd.DataFrame:
    """tables/mood.csv: the mood model's per-frame precision and recall on the bank's held-out folds."""
    df, threshold = mood_table(read_bank(bank), seed, c)
    write_table(df, table, "The mood model on the bank's held-out verb phrases",
                f"Out of fold over {FOLDS} folds of (language, verb phrase); a request is a command at P(command) >= "
                f"{threshold:.2f}, the largest threshold with command recall >= {COMMAND_RECALL} in both languages. "
                "docs/router.md, 'Reading a request'.", seed)
    return df


def kiwi_conditions(texts) -> list[bool]:
    """Does Kiwi (kiwipiepy, the ko extra) read a conditional ending, -(으)면 tagged EC, in each text?"""
    kiwi = require("kiwipiepy", "ko").Kiwi()
    return [any(t.tag == "EC" and t.form in ("면", "으면") for t in kiwi.tokenize(x)) for x in texts]


def kiwi_agreement(sets: dict[str, list[str]]) -> pd.DataFrame:
    """Per set of Korean texts: how often the hand reader's condition (:func:`toolgate.core.mood.conditions`) agrees
    with Kiwi's, and the texts where only one of them reads one."""
    recs = []
    for name, texts in sets.items():
        hand = np.array([bool(conditions(t)) for t in texts], bool)
        kiwi = np.array(kiwi_conditions(texts), bool)
        recs.append({"set": name, "n": len(texts), "hand": int(hand.sum()), "kiwi": int(kiwi.sum()),
                     "agreement": float((hand == kiwi).mean()) if len(texts) else float("nan"),
                     "hand_only": int((hand & ~kiwi).sum()), "kiwi_only": int((~hand & kiwi).sum()),
                     "examples": " | ".join([t for t, h, k in zip(texts, hand, kiwi) if h != k][:3])})
    return pd.DataFrame(recs)


def write_kiwi_agreement(bank, utterances, table) -> pd.DataFrame:
    """tables/kiwi_agreement.csv: the hand reader's Korean conditions against Kiwi's, on the bank's and the
    experiment's Korean requests."""
    korean = lambda rows: [r["text"] for r in rows if r["lang"] == "ko"]  # noqa: E731
    note = ("A condition: a word ending in -(으)면 that is no noun (hand: toolgate.core.mood.conditions), or an EC "
            "morpheme 면/으면 (Kiwi). docs/router.md, 'Reading a request'.")
    try:
        df = kiwi_agreement({"mood bank": korean(read_bank(bank)),
                             "utterances": korean([r for _, r in io.read_jsonl(utterances)])})
    except MissingExtra:  # an install without the ko extra: the table says so, the workflow goes on
        df, note = pd.DataFrame(columns=["set", "n", "hand", "kiwi", "agreement", "hand_only", "kiwi_only",
                                         "examples"]), "No rows: kiwipiepy is not installed (pip install -e '.[ko]'). " + note
    write_table(df, table, "The hand reader's Korean conditions against Kiwi's", note)
    return df
