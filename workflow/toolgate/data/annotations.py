"""Blind annotation passes over the utterance set: loading, agreement with gold and between passes.

A pass is ``<folder>/<pass>.csv`` with columns ``lang, text, answer`` (``answer``:
an action id or ``none``), after ``#`` comment lines that say how the pass was
made. Passes are keyed by text, so they survive regeneration for every text the
banks still produce; the data card reports coverage.
"""
from __future__ import annotations

import csv
from itertools import combinations
from pathlib import Path

import pandas as pd

from ..core.catalog import action_ids
from ..core.errors import InputError

NONE = "none"
COLUMNS = ["lang", "text", "answer"]


def load_passes(folder, catalog: list[dict]) -> dict[str, pd.DataFrame]:
    """Every pass in ``folder`` by name; answers checked against the catalog's action ids."""
    allowed = set(action_ids(catalog)) | {NONE}
    passes = {}
    for path in sorted(Path(folder).glob("*.csv")):
        lines = path.read_text(encoding="utf-8").splitlines()
        body = [(i, line) for i, line in enumerate(lines, start=1) if not line.startswith("#")]
        reader = csv.reader([line for _, line in body])
        header = next(reader, None)
        if header != COLUMNS:
            raise InputError(path, f"header must be {','.join(COLUMNS)}", line=body[0][0] if body else None)
        recs = []
        for (lineno, _), rec in zip(body[1:], reader):
            if len(rec) != 3:
                raise InputError(path, "expected 3 fields", line=lineno)
            if rec[2] not in allowed:
                raise InputError(path, f"'{rec[2]}' is not an action id of the catalog or '{NONE}'", line=lineno, field="answer")
            recs.append(rec)
        passes[path.stem] = pd.DataFrame(recs, columns=COLUMNS).drop_duplicates(["lang", "text"], keep="last")
    return passes


def joined(rows: list[dict], passes: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per utterance: lang, slice, gold (action id or none) and each pass's answer (NaN: not annotated)."""
    df = pd.DataFrame({"utterance_id": [r["utterance_id"] for r in rows], "lang": [r["lang"] for r in rows],
                       "text": [r["text"] for r in rows], "slice": [r["slice"] for r in rows],
                       "gold": [r["gold_tool"] or NONE for r in rows]})
    for name, p in passes.items():
        df = df.merge(p.rename(columns={"answer": name}), on=["lang", "text"], how="left")
    return df


def _kappa(a, b) -> float:
    from sklearn.metrics import cohen_kappa_score  # imported where used, as in gate.models

    return float(cohen_kappa_score(a, b)) if len(set(a) | set(b)) > 1 else float("nan")


def agreement_frame(ann: pd.DataFrame, passes) -> pd.DataFrame:
    """Per language (and all) x slice: coverage, agreement with gold (raw, kappa) per pass, and between passes."""
    recs = []
    for lang in sorted(ann["lang"].unique()) + ["all"]:
        for slice_ in sorted(ann["slice"].unique()):
            sub = ann[((ann["lang"] == lang) | (lang == "all")) & (ann["slice"] == slice_)]
            for name in passes:
                done = sub[sub[name].notna()]
                recs.append({"lang": lang, "slice": slice_, "compare": f"{name} vs gold", "n": len(sub),
                             "annotated": len(done), "agreement": (done[name] == done["gold"]).mean() if len(done) else float("nan"),
                             "kappa": _kappa(done["gold"], done[name]) if len(done) else float("nan")})
            for a, b in combinations(passes, 2):
                done = sub[sub[a].notna() & sub[b].notna()]
                recs.append({"lang": lang, "slice": slice_, "compare": f"{a} vs {b}", "n": len(sub),
                             "annotated": len(done), "agreement": (done[a] == done[b]).mean() if len(done) else float("nan"),
                             "kappa": _kappa(done[a], done[b]) if len(done) else float("nan")})
    return pd.DataFrame(recs)


def confusions(ann: pd.DataFrame, passes) -> pd.DataFrame:
    """(gold, answer) pairs where a pass left gold, with how often, most frequent first."""
    long = pd.concat([ann[["gold", name]].rename(columns={name: "answer"}) for name in passes], ignore_index=True)
    off = long[long["answer"].notna() & (long["answer"] != long["gold"])]
    out = off.groupby(["gold", "answer"]).size().rename("n").reset_index()
    return out.sort_values(["n", "gold", "answer"], ascending=[False, True, True], kind="stable")
