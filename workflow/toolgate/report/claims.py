"""The paper's claims as checkable statements over result tables.

Each test takes the tables and the experiment's context (signal registry,
roles) and returns (verdict, evidence): verdict is "holds" or "does not hold";
a missing table or row raises and the ledger says "not computable". The
thresholds that turn a qualitative claim ("several-fold", "far better") into a
test are fixed here, before looking at any result, and printed in the ledger.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..config import Roles
from ..signals import Signal, of_kind


@dataclass(frozen=True)
class Context:
    signals: dict[str, Signal]
    roles: Roles


CLAIMS: list[tuple[str, str, object]] = []


def claim(text: str, rule: str):
    """Register a claim's test with its statement and the rule that decides it."""
    def register(test):
        CLAIMS.append((text, rule, test))
        return test
    return register


def _row(t, table, **where):
    df = t[table]
    for k, v in where.items():
        df = df[df[k].astype(str) == str(v)]
    if len(df) != 1:
        raise KeyError(f"{table}: {len(df)} rows for {where}")
    return df.iloc[0]


def _verdict(ok: bool) -> str:
    return "holds" if ok else "does not hold"


def _mismatch_differences(t, a: list[str], b: list[str], what: str) -> pd.DataFrame:
    """Bootstrap rows (utterance clusters, mismatch slice) of a - b for a in ``a``, b in ``b``."""
    rows = t["bootstrap"]
    rows = rows[(rows["cluster_unit"] == "utterance") & (rows["slice"] == "mismatch") & rows["a"].isin(a)
                & rows["b"].isin(b)]
    if rows.empty:
        raise KeyError(f"no mismatch-slice {what} rows in the bootstrap table")
    return rows


@claim('The gate cuts delegate-to-skill errors several-fold against standalone BM25',
       'routing_baselines: standalone / gated delegate-to-skill count >= 3')
def gate_cuts_errors(t, c: Context):
    r = _row(t, "routing_baselines", metric="delegate_to_skill")
    a, b = r["standalone_bm25_count"], r["gated_count"]
    ratio = a / b if b else np.inf
    return _verdict(ratio >= 3), f"{int(a)}/{int(r['standalone_bm25_of'])} -> {int(b)}/{int(r['gated_of'])} ({ratio:.1f}x)"


@claim('Every single BM25 score feature stays below 0.70 AUC on mismatch-in vs out',
       "gate_auc: max of the six raw features' auc_mismatch < 0.70")
def features_below(t, c: Context):
    df = t["gate_auc"]
    if df["auc_mismatch"].isna().all():
        raise KeyError("no mismatch slice in this experiment")
    six = df[df["signal"].isin(of_kind(c.signals, "score_feature"))]
    top = six.loc[six["auc_mismatch"].idxmax()]
    return _verdict(bool((six["auc_mismatch"] < 0.70).all()) and len(six) == 6), (
        f"range {six['auc_mismatch'].min():.3f}-{six['auc_mismatch'].max():.3f} (max: {top['signal']})")


@claim('G3 is far better on match-in than on mismatch-in',
       'gate_auc: G3 auc_match - auc_mismatch >= 0.15')
def g3_match_vs_mismatch(t, c: Context):
    r = _row(t, "gate_auc", signal="g3")
    if np.isnan(r["auc_match"]) or np.isnan(r["auc_mismatch"]):
        raise KeyError("no match/mismatch slices in this experiment")
    gap = r["auc_match"] - r["auc_mismatch"]
    return _verdict(gap >= 0.15), f"match {r['auc_match']:.3f} vs mismatch {r['auc_mismatch']:.3f} (gap {gap:+.3f})"


@claim('Query length carries most of G3',
       'bootstrap: G3 - six-feature interval > 0, and six-feature mismatch AUC < 0.6')
def length_carries_g3(t, c: Context):
    b = _row(t, "bootstrap", cluster_unit="utterance", a="g3", b="g3_no_length")
    if b["slice"] != "mismatch":
        raise KeyError("no mismatch slice in this experiment")
    r = _row(t, "gate_auc", signal="g3_no_length")
    ok = bool(b["excludes_zero"]) and b["difference"] > 0 and r["auc_mismatch"] < 0.6
    return _verdict(ok), (f"G3 {b['auc_a']:.3f}, without length {b['auc_b']:.3f}; length adds {b['difference']:+.3f} "
                          f"[{b['ci_low']:.3f}, {b['ci_high']:.3f}]")


@claim('Each encoder gate beats G3 on mismatch-in vs out',
       'bootstrap (utterance clusters): every encoder - G3 interval above 0')
def encoders_beat_g3(t, c: Context):
    rows = _mismatch_differences(t, of_kind(c.signals, "encoder"), ["g3"], "encoder-minus-G3")
    ok = bool((rows["ci_low"] > 0).all())
    return _verdict(ok), "; ".join(f"{r.a} - G3 {r.difference:+.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]" for r in rows.itertuples())


@claim('The two encoders are not separated',
       'bootstrap: encoder - second encoder interval contains 0')
def encoders_not_separated(t, c: Context):
    encoders = of_kind(c.signals, "encoder")
    r = _mismatch_differences(t, encoders, encoders, "encoder-minus-encoder").iloc[0]
    return _verdict(not r["excludes_zero"]), f"{r['a']} - {r['b']} {r['difference']:+.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"


@claim('Calibration leaves mismatch AUC unchanged while lowering ECE',
       'calibration: G3 Platt |d auc_mismatch| <= 0.01 and ece_all lower')
def calibration_keeps_auc(t, c: Context):
    none, platt = _row(t, "calibration", gate="g3", method="none"), _row(t, "calibration", gate="g3", method="platt")
    if np.isnan(none["auc_mismatch"]):
        raise KeyError("no mismatch slice in this experiment")
    d = platt["auc_mismatch"] - none["auc_mismatch"]
    ok = abs(d) <= 0.01 and platt["ece_all"] < none["ece_all"]
    return _verdict(ok), (f"G3 ECE {none['ece_all']:.3f} -> {platt['ece_all']:.3f}; mismatch AUC "
                          f"{none['auc_mismatch']:.3f} -> {platt['auc_mismatch']:.3f}")


@claim('BM25 beats the encoders on matched vocabulary and loses on paraphrase',
       'selection (all languages): BM25 top-1 > each encoder on match, < on mismatch')
def bm25_match_vs_paraphrase(t, c: Context):
    df = t["selection"]
    df = df[df["lang"] == "all"]
    piv = df.pivot(index="ranker", columns="slice", values="top1")
    lex = c.roles.lexical
    others = [r for r in piv.index if r != lex]
    ok = all(piv.loc[lex, "match"] > piv.loc[o, "match"] and piv.loc[lex, "mismatch"] < piv.loc[o, "mismatch"] for o in others)
    return _verdict(ok), "; ".join(f"{r}: match {piv.loc[r, 'match']:.3f}, mismatch {piv.loc[r, 'mismatch']:.3f}" for r in piv.index)


@claim('The crossover moves with the candidate count',
       'crossover: p* spans >= 0.05 across k, or exists at some k and not others')
def crossover_moves(t, c: Context):
    df = t["crossover"]
    if df["crossover_p"].isna().all() and df["note"].str.startswith("not computable").all():
        raise KeyError("no match/mismatch slices in this experiment")
    parts, ok = [], False
    for enc, d in df.groupby("encoder"):
        p = d["crossover_p"].dropna()
        spread = p.max() - p.min() if len(p) > 1 else 0.0
        ok |= spread >= 0.05 or (len(p) and len(p) < len(d))
        parts.append(f"{enc}: " + ", ".join(f"k={int(r.k)}: {'none' if np.isnan(r.crossover_p) else f'{r.crossover_p:.3f}'}"
                                          for r in d.itertuples()))
    return _verdict(bool(ok)), "; ".join(parts)


@claim('Rerankers recover part of the top-1/top-5 gap',
       'rerank (all): recovered_share > 0 for every reranker')
def rerankers_recover(t, c: Context):
    df = t["rerank"]
    df = df[(df["lang"] == "all") & (df["slice"] == "all")]
    return _verdict(bool((df["recovered_share"] > 0).all())), "; ".join(
        f"{r.reranker}: {r.recovered_share:+.1%}" for r in df.itertuples())


@claim('Split pipelines do not beat shared ones on MCC',
       'signal_diversity: the shared - split interval is not entirely below 0')
def split_not_better(t, c: Context):
    r = _row(t, "signal_diversity", group="difference")
    return _verdict(not r["ci_high"] < 0), f"shared - split MCC {r['mcc']:+.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"




def ledger(tables: dict, signals: dict[str, Signal], roles: Roles) -> pd.DataFrame:
    """Every claim with its test, verdict and evidence on this experiment's tables."""
    ctx, recs = Context(signals, roles), []
    for text, rule, test in CLAIMS:
        try:
            verdict, evidence = test(tables, ctx)
        except (KeyError, IndexError, ValueError) as exc:
            verdict, evidence = "not computable", str(exc)
        recs.append({"claim": text, "test": rule, "verdict": verdict, "evidence": evidence})
    return pd.DataFrame(recs)
