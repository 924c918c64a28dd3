"""The claims ledger on every data set that can test it: the claims-by-set matrix and its family sentences.

The sets are the experiment's own utterances, each external cross-check set the experiment ran
(FunctionChat CallDecision and Singlecall, BFCL and its two-or-more-candidate rows), and every experiment
``report.compare`` names (its config; its tables read from ``results/<experiment>/tables``). An external set
has gate AUCs with paired differences over all in- vs out-of-catalog rows and top-1 selection per candidate
condition, so the claims that need a match/mismatch split, routes, reranking or the candidate ablation are
"not testable" there, each with the reason the test itself gives.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import config as cfgmod
from ..gate.signals import Signal, registry
from ..retrieval.rankers import encoder_rankers
from .claims import FAMILY, NOT_TESTABLE, ledger
from .tables import load_tables

GATE_SETS = {"functionchat": "functionchat_calldecision", "bfcl": "bfcl", "bfcl_2plus": "bfcl_2plus"}
SELECTION_SETS = {"functionchat": "functionchat_singlecall", "bfcl": "bfcl"}


def external_sets(tables: dict) -> dict[str, dict]:
    """Each external set's tables in the shapes the claims read (empty when the external study did not run)."""
    out: dict[str, dict] = {}
    if "external_gate" in tables and "external_bootstrap" in tables:
        gate, boot = tables["external_gate"], tables["external_bootstrap"]
        for dataset, name in GATE_SETS.items():
            g = gate[(gate["dataset"] == dataset) & (gate["mode"] != "transfer")]
            if g.empty:
                continue
            out.setdefault(name, {})["gate_auc"] = pd.DataFrame(
                {"signal": g["signal"], "auc_overall": g["auc"], "auc_match": np.nan, "auc_mismatch": np.nan})
            out[name]["bootstrap"] = boot[boot["dataset"] == dataset].drop(columns="dataset")
    if "external_selection" in tables:
        sel = tables["external_selection"]
        for dataset, name in SELECTION_SETS.items():
            s = sel[sel["dataset"] == dataset]
            if not s.empty:  # candidate conditions, not vocabulary slices
                out.setdefault(name, {})["selection"] = s.assign(lang="all", slice=s["condition"])
    return out


def compared_sets(paths) -> dict[str, tuple[dict, dict[str, Signal], object, str]]:
    """(tables, registry, roles, config path) of each experiment a ``report.compare`` config names; tables {} if
    the experiment has not run yet."""
    out = {}
    for path in paths:
        cfg = cfgmod.load(path)
        roles = cfgmod.section("roles", cfg["roles"])
        folder = Path("results") / cfg["experiment"] / "tables"
        out[cfg["experiment"]] = (load_tables(folder) if folder.is_dir() else {},
                                  registry(roles.lexical, encoder_rankers(cfg["rankers"])), roles, path)
    return out


def claims_matrix(own: str, tables: dict, signals: dict[str, Signal], roles, compare=()) -> pd.DataFrame:
    """One row per (claim, set): family, verdict, evidence. ``own``: this experiment's name."""
    sets = {own: (tables, signals, roles, "")}
    sets.update({f"{name} (external)": (t, signals, roles, "") for name, t in external_sets(tables).items()})
    sets.update(compared_sets(compare))
    frames = []
    for name, (t, reg, rl, path) in sets.items():
        led = ledger(t, reg, rl)
        if name.endswith("(external)"):  # the external study measures gate AUCs and selection only
            led["evidence"] = led["evidence"].str.replace(r"^table (\w+)\.csv was not produced$",
                                                          r"an external set has no \1 table", regex=True)
        if not t:
            led["evidence"] = f"not run yet: snakemake --configfile {path} --cores 2, then rerun this report"
        frames.append(led.assign(set=name))
    return pd.concat(frames, ignore_index=True)[["claim", "family", "set", "verdict", "evidence"]]


def matrix_table(matrix: pd.DataFrame) -> pd.DataFrame:
    """Claims as rows, sets as columns, each cell ``verdict: evidence``."""
    cells = matrix.assign(cell=matrix["verdict"] + ": " + matrix["evidence"])
    wide = cells.pivot(index="claim", columns="set", values="cell")
    order = list(dict.fromkeys(matrix["claim"]))
    return wide.loc[order, list(dict.fromkeys(matrix["set"]))].reset_index()


def family_sentences(matrix: pd.DataFrame) -> list[str]:
    """Per claim family: on which sets its claims hold, fail, or cannot be tested."""
    out = []
    for family in dict.fromkeys(FAMILY.values()):
        m = matrix[matrix["family"] == family]
        parts = []
        for name, g in m.groupby("set", sort=False):
            tested = g[g["verdict"] != NOT_TESTABLE]
            if len(tested):
                parts.append(f"{int((tested['verdict'] == 'holds').sum())} of {len(tested)} on {name}")
        untested = [n for n, g in m.groupby("set", sort=False) if (g["verdict"] == NOT_TESTABLE).all()]
        head = f"{family.capitalize()} ({m['claim'].nunique()} claims): "
        sentence = head + ("holds " + ", ".join(parts) if parts else "no set can test them")
        out.append(sentence + (f"; none testable on {', '.join(untested)}." if untested else "."))
    return out
