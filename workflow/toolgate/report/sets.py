"""The claims ledger on every data set that can test it: the claims-by-set matrix and its family sentences.

The sets are the experiment's own utterances, each external cross-check set the experiment ran
(FunctionChat CallDecision and Singlecall, BFCL and its two-or-more-candidate rows), and every experiment
``report.compare`` names (its config; its tables read from ``results/<experiment>/tables``). An external set
has gate AUCs with paired differences over all in- vs out-of-catalog rows and top-1 selection per candidate
condition, so the claims that need a match/mismatch split, routes, reranking or the candidate ablation are
"not testable" there, each with the reason the test itself gives. The wide matrix states each claim's test once,
gives each testable cell its verdict mark and deciding number, and numbers the reasons for "not testable" as
footnotes, one per reason.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import config as cfgmod
from ..core.rankers import encoder_rankers
from ..core.signals import Signal, registry
from ..experiment import Layout
from .claims import FAMILY, MARK, NOT_TESTABLE, ledger
from .tables import load_tables

GATE_SETS = {"functionchat": "functionchat_calldecision", "bfcl": "bfcl", "bfcl_2plus": "bfcl_2plus"}
SELECTION_SETS = {"functionchat": "functionchat_singlecall", "bfcl": "bfcl"}
EXTERNAL_ONLY = ("an external set has only the external study's tables (gate AUCs with paired differences on "
                 "CallDecision and BFCL, top-1 selection on Singlecall and BFCL), not the one this claim reads")


def external_label(name: str) -> str:
    """An external set as the claims matrix and the figures name it (a study's set name, functionchat, or the
    matrix's own, functionchat_calldecision)."""
    return f"{GATE_SETS.get(name, name)} (external)"


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
            if "gate_loco" in tables:
                out[name]["gate_loco"] = tested_on(tables, dataset)["gate_loco"]
    if "external_selection" in tables:
        sel = tables["external_selection"]
        for dataset, name in SELECTION_SETS.items():
            s = sel[sel["dataset"] == dataset]
            if not s.empty:  # candidate conditions, not vocabulary slices
                out.setdefault(name, {})["selection"] = s.assign(lang="all", slice=s["condition"])
    return out


def tested_on(tables: dict, name: str) -> dict:
    """``tables`` with gate_loco.csv cut to the rows tested on set ``name`` (a set's transfer claims read those)."""
    if "gate_loco" not in tables:
        return tables
    return {**tables, "gate_loco": tables["gate_loco"][tables["gate_loco"]["test_set"] == name]}


def compared_folder(path) -> Path:
    """The tables folder of the experiment a ``report.compare`` config names."""
    return Layout(cfgmod.load(path)["experiment"]).tables


def compared_inputs(paths) -> list[str]:
    """The report rule's inputs for ``report.compare``: each config and every table of its experiment that exists now,
    when the DAG is built.

    Another experiment's tables come from its own run (its config, its results folder): no rule of this workflow can
    make them, and an input nothing can make must exist. So the report depends on the tables that are there: a rerun
    of the other experiment rewrites them and this report reruns; one not run yet has a "not run yet" column, and its
    first run adds tables, new inputs for which Snakemake reruns the report."""
    return [p for path in paths for p in [str(path), *sorted(str(t) for t in compared_folder(path).glob("*.csv"))]]


def compared_sets(paths) -> dict[str, tuple[dict, dict[str, Signal], object, str]]:
    """(tables, registry, roles, config path) of each experiment a ``report.compare`` config names; tables {} if
    the experiment has not run yet."""
    out = {}
    for path in paths:
        cfg = cfgmod.load(path)
        roles = cfgmod.section("roles", cfg["roles"])
        folder = compared_folder(path)
        out[cfg["experiment"]] = (tested_on(load_tables(folder), cfg["experiment"]) if folder.is_dir() else {},
                                  registry(roles.lexical, encoder_rankers(cfg["rankers"])), roles, path)
    return out


def claims_matrix(own: str, tables: dict, signals: dict[str, Signal], roles, compare=()) -> pd.DataFrame:
    """One row per (claim, set): family, verdict, evidence. ``own``: this experiment's name."""
    sets = {own: (tested_on(tables, own), signals, roles, "")}
    sets.update({external_label(name): (t, signals, roles, "") for name, t in external_sets(tables).items()})
    sets.update(compared_sets(compare))
    frames = []
    for name, (t, reg, rl, path) in sets.items():
        led = ledger(t, reg, rl)
        if name.endswith("(external)"):  # the external study measures gate AUCs and selection only
            led["evidence"] = led["evidence"].str.replace(r"^table (\w+)\.csv was not produced$", EXTERNAL_ONLY,
                                                          regex=True)
        if not t:
            led["evidence"] = f"not run yet: snakemake --configfile {path} --cores 2, then rerun this report"
        frames.append(led.assign(set=name))
    return pd.concat(frames, ignore_index=True)[["claim", "family", "test", "set", "verdict", "deciding", "evidence"]]


def footnotes(matrix: pd.DataFrame) -> dict[str, int]:
    """Each distinct reason a cell is not testable, numbered in the order the wide matrix meets it (row by row)."""
    untested = matrix[matrix["verdict"] == NOT_TESTABLE].set_index(["claim", "set"])["evidence"]
    reasons = [untested[(c, s)] for c in dict.fromkeys(matrix["claim"]) for s in dict.fromkeys(matrix["set"])
               if (c, s) in untested.index]
    return {reason: i + 1 for i, reason in enumerate(dict.fromkeys(reasons))}


def cell(verdict: str, deciding: str, note: int | None = None) -> str:
    """A matrix cell: the verdict's mark and the deciding number against its threshold, or 'not testable [n]'."""
    return f"{NOT_TESTABLE} [{note}]" if verdict == NOT_TESTABLE else f"{MARK[verdict]} {deciding}"


def matrix_table(matrix: pd.DataFrame) -> pd.DataFrame:
    """Claims as rows with their test in words, sets as columns, each cell :func:`cell` (notes: :func:`footnotes`)."""
    notes = footnotes(matrix)
    cells = matrix.assign(cell=[cell(r.verdict, r.deciding, notes.get(r.evidence)) for r in matrix.itertuples()])
    wide = cells.pivot(index="claim", columns="set", values="cell")
    order = list(dict.fromkeys(matrix["claim"]))
    tests = matrix.drop_duplicates("claim").set_index("claim")["test"]
    wide = wide.loc[order, list(dict.fromkeys(matrix["set"]))]
    wide.insert(0, "test", tests.loc[order])
    return wide.reset_index()


def footnote_lines(matrix: pd.DataFrame) -> list[str]:
    """'[n] reason' for each footnote of :func:`matrix_table`, with the sets it applies to."""
    out = []
    for reason, n in footnotes(matrix).items():
        sets = list(dict.fromkeys(matrix.loc[(matrix["verdict"] == NOT_TESTABLE) & (matrix["evidence"] == reason), "set"]))
        out.append(f"[{n}] {reason} ({', '.join(sets)}).")
    return out


def verdict_count(n: int, verdict: str) -> str:
    """'1 holds', '9 hold', '1 does not hold', '9 do not hold': the verb follows the count."""
    if verdict == "holds":
        return f"{n} hold{'s' if n == 1 else ''}"
    return f"{n} {'does' if n == 1 else 'do'} not hold"


SCOPE = {"transfer": "across catalogs"}  # every other family is tested within one catalog


def verdict_table(matrix: pd.DataFrame) -> pd.DataFrame:
    """The report's opening table, from the matrix's cells: per claim family (rows) and set (columns), how many
    of its testable claims hold ('2 of 3 hold'), or 'not testable'."""
    rows = []
    for family in dict.fromkeys(FAMILY.values()):
        m = matrix[matrix["family"] == family]
        if m.empty:
            continue
        row = {"claims": f"{family} ({SCOPE.get(family, 'within a catalog')}, {m['claim'].nunique()})"}
        for name, g in m.groupby("set", sort=False):
            tested = g[g["verdict"] != NOT_TESTABLE]
            held = int((tested["verdict"] == "holds").sum())
            row[name] = f"{held} of {len(tested)} hold" if len(tested) else NOT_TESTABLE
        rows.append(row)
    return pd.DataFrame(rows)


WITHIN_CLAIM = "Each encoder gate beats G3 on mismatch-in vs out"
ACROSS_CLAIMS = ("A gate of BM25 score features fitted on another catalog loses its separation on this one",
                 "A frozen encoder's similarity keeps its separation on a catalog it was never fitted on")


def thesis(matrix: pd.DataFrame, own: str) -> dict:
    """The cells the thesis sentence reads: ``within`` (the own set's verdict on :data:`WITHIN_CLAIM`, and its
    deciding number), ``holds``/``fails`` (the sets testing both transfer claims where both hold / one does not)."""
    cells = matrix.set_index(["claim", "set"])
    within = cells.loc[(WITHIN_CLAIM, own)] if (WITHIN_CLAIM, own) in cells.index else None
    across = matrix[matrix["claim"].isin(ACROSS_CLAIMS) & (matrix["verdict"] != NOT_TESTABLE)]
    both = {n: g for n, g in across.groupby("set", sort=False) if g["claim"].nunique() == len(ACROSS_CLAIMS)}
    return {"within": NOT_TESTABLE if within is None else within["verdict"],
            "deciding": "" if within is None or within["verdict"] == NOT_TESTABLE else within["deciding"],
            "holds": [n for n, g in both.items() if (g["verdict"] == "holds").all()],
            "fails": [n for n, g in both.items() if not (g["verdict"] == "holds").all()]}


def thesis_sentence(matrix: pd.DataFrame, own: str) -> str:
    """Whether the paper's case for spending the encoder on abstention holds within this catalog (encoder gates beat
    G3 on its own set) and on which sets it holds across catalogs (G3 loses its separation when transferred and
    encoder similarity keeps it), read from the matrix's cells (:func:`thesis`)."""
    t = thesis(matrix, own)
    within = {"holds": "holds", "does not hold": "does not hold"}.get(t["within"], "cannot be tested")
    tested = len(t["holds"]) + len(t["fails"])
    across = (f"holds on {len(t['holds'])} of the {tested} sets that test both transfer claims"
              + (f" ({', '.join(t['holds'])})" if t["holds"] else "")
              + (f" and not on {', '.join(t['fails'])}" if t["fails"] else "") if tested
              else "cannot be tested as a whole (no set tests both transfer claims; the table counts each claim "
                   "on the sets that test it)")
    return (f"The paper's case for spending the encoder on abstention {within} within this catalog"
            + (f" ({t['deciding']})" if t["deciding"] else "") + f"; carried across catalogs, which the paper does not "
            f"test (a BM25-score gate loses its separation, an encoder's similarity keeps it), it {across}.")
