"""The paper's claims as checkable statements over result tables.

Each test takes the tables and the experiment's context (signal registry,
roles) and returns (verdict, evidence): verdict is "holds" or "does not hold".
A test whose inputs are absent raises :class:`Missing` naming the table,
column, row or slice, and the ledger says "not testable" with that reason.
Each claim belongs to a family (selection, abstention, routing), which the
claims-by-set matrix (:mod:`.sets`) summarises in one sentence.
The thresholds that turn a qualitative claim ("several-fold", "far better")
into a test are fixed here, before looking at any result, and printed in the
ledger.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..config import Roles
from ..gate.bootstrap import NO_SLICE, slice_title
from ..gate.signals import Signal, of_kind
from ..gate.subtype import deciding_subtype_sentence


@dataclass(frozen=True)
class Context:
    signals: dict[str, Signal]
    roles: Roles


class Missing(Exception):
    """A claim's input is absent; the message says which table, column, row or slice, in words."""


CLAIMS: list[tuple[str, str, object]] = []
FAMILY: dict[str, str] = {}  # claim text -> selection / abstention / routing
NOT_TESTABLE = "not testable"


def claim(text: str, rule: str, family: str):
    """Register a claim's test with its statement, the rule that decides it and its family."""
    def register(test):
        CLAIMS.append((text, rule, test))
        FAMILY[text] = family
        return test
    return register


def _table(t, name, *columns) -> pd.DataFrame:
    if name not in t:
        raise Missing(f"table {name}.csv was not produced")
    lacking = [c for c in columns if c not in t[name].columns]
    if lacking:
        raise Missing(f"{name}.csv has no column {', '.join(lacking)}")
    return t[name]


def _row(t, table, cols=(), **where) -> pd.Series:
    """The one row of ``table`` where every column equals its value; ``cols``: the columns the caller reads."""
    df = _table(t, table, *where, *cols)
    for k, v in where.items():
        df = df[df[k].astype(str) == str(v)]
    if len(df) != 1:
        cond = ", ".join(f"{k}={v}" for k, v in where.items())
        raise Missing(f"{table}.csv has {'no' if df.empty else len(df)} rows where {cond}")
    return df.iloc[0]


def _verdict(ok: bool) -> str:
    return "holds" if ok else "does not hold"


def _finest_unit(rows: pd.DataFrame) -> str:
    """Utterance clusters where the bootstrap has them, else an external set's own clusters."""
    return "utterance" if (rows["cluster_unit"] == "utterance").any() else "cluster"


def _encoder_differences(t, a: list[str], b: list[str], what: str) -> tuple[pd.DataFrame, str]:
    """Utterance-cluster bootstrap rows of a - b, and the slice they were computed on in words.

    The mismatch slice's rows when there are any; a catalog without one has only all-in-vs-out rows, and those
    are the best evidence it has.
    """
    rows = _table(t, "bootstrap", "cluster_unit", "slice", "a", "b", "difference", "ci_low", "ci_high")
    rows = rows[(rows["cluster_unit"] == _finest_unit(rows)) & rows["a"].isin(a) & rows["b"].isin(b)]
    for label in ("mismatch", NO_SLICE):
        if (rows["slice"] == label).any():
            return rows[rows["slice"] == label], slice_title(label)
    raise Missing(f"bootstrap.csv has no utterance-cluster {what} rows (slice mismatch or {NO_SLICE})")


def _versus_ladder(t) -> tuple[bool, str]:
    """The routing guard: False when the gated - ladder accuracy interval lies entirely below 0."""
    key = "gated_minus_single_pool_ladder"
    r = _row(t, "routing_baselines", ("gated", "single_pool_ladder", key, f"{key}_ci_low", f"{key}_ci_high"),
             metric="accuracy")
    lo, hi = r[f"{key}_ci_low"], r[f"{key}_ci_high"]
    if np.isnan(hi):
        raise Missing(f"routing_baselines.csv has no interval for {key} (metric=accuracy)")
    return bool(hi >= 0), (f"accuracy gated {r['gated']:.3f} vs ladder {r['single_pool_ladder']:.3f}: "
                           f"{r[key]:+.3f} [{lo:.3f}, {hi:.3f}]")


@claim('The gate cuts delegate-to-skill errors several-fold against standalone BM25',
       'routing_baselines: standalone / gated delegate-to-skill count >= 3, and the ladder guard (next claim) '
       'does not fail', "routing")
def gate_cuts_errors(t, c: Context):
    r = _row(t, "routing_baselines", ("standalone_bm25_count", "standalone_bm25_of", "gated_count", "gated_of"),
             metric="delegate_to_skill")
    a, b = r["standalone_bm25_count"], r["gated_count"]
    ratio = a / b if b else np.inf
    # fewer errors bought by routing worse than the ladder does not count: the claim is paired with the guard
    guard_ok, guard = _versus_ladder(t)
    return _verdict(ratio >= 3 and guard_ok), (
        f"{int(a)}/{int(r['standalone_bm25_of'])} -> {int(b)}/{int(r['gated_of'])} ({ratio:.1f}x); {guard}"
        + ("" if guard_ok else " (the ladder guard fails)"))


@claim('The gated router is at least as accurate as the single-pool ladder',
       'routing_baselines: the gated - ladder accuracy interval is not entirely below 0', "routing")
def gated_not_below_ladder(t, c: Context):
    ok, evidence = _versus_ladder(t)
    return _verdict(ok), evidence


@claim('Every single BM25 score feature stays below 0.70 AUC on mismatch-in vs out',
       "gate_auc: max of the six raw features' auc_mismatch < 0.70", "abstention")
def features_below(t, c: Context):
    df = _table(t, "gate_auc", "signal", "auc_mismatch")
    six = df[df["signal"].isin(of_kind(c.signals, "score_feature"))].dropna(subset=["auc_mismatch"])
    if six.empty:
        raise Missing("gate_auc.csv has no auc_mismatch for the BM25 score features (no mismatch slice)")
    top = six.loc[six["auc_mismatch"].idxmax()]
    return _verdict(bool((six["auc_mismatch"] < 0.70).all()) and len(six) == 6), (
        f"range {six['auc_mismatch'].min():.3f}-{six['auc_mismatch'].max():.3f} (max: {top['signal']})")


@claim('G3 is far better on match-in than on mismatch-in',
       'gate_auc: G3 auc_match - auc_mismatch >= 0.15', "abstention")
def g3_match_vs_mismatch(t, c: Context):
    r = _row(t, "gate_auc", ("auc_match", "auc_mismatch"), signal="g3")
    if np.isnan(r["auc_match"]) or np.isnan(r["auc_mismatch"]):
        raise Missing("gate_auc.csv has no G3 auc_match/auc_mismatch (no match/mismatch slices)")
    gap = r["auc_match"] - r["auc_mismatch"]
    return _verdict(gap >= 0.15), f"match {r['auc_match']:.3f} vs mismatch {r['auc_mismatch']:.3f} (gap {gap:+.3f})"


@claim('Query length carries most of G3',
       'bootstrap: G3 - six-feature interval > 0, and six-feature mismatch AUC < 0.6', "abstention")
def length_carries_g3(t, c: Context):
    unit = _finest_unit(_table(t, "bootstrap", "cluster_unit"))
    b = _row(t, "bootstrap", ("slice", "difference", "ci_low", "ci_high", "excludes_zero", "auc_a", "auc_b"),
             cluster_unit=unit, a="g3", b="g3_no_length")
    if b["slice"] != "mismatch":
        raise Missing(f"bootstrap.csv has no mismatch-slice rows (its slice: {b['slice']})")
    r = _row(t, "gate_auc", ("auc_mismatch",), signal="g3_no_length")
    ok = bool(b["excludes_zero"]) and b["difference"] > 0 and r["auc_mismatch"] < 0.6
    return _verdict(ok), (f"G3 {b['auc_a']:.3f}, without length {b['auc_b']:.3f}; length adds {b['difference']:+.3f} "
                          f"[{b['ci_low']:.3f}, {b['ci_high']:.3f}]")


@claim('Each encoder gate beats G3 on mismatch-in vs out',
       'bootstrap (utterance clusters; mismatch slice, else all in vs out): every encoder - G3 interval above 0', "abstention")
def encoders_beat_g3(t, c: Context):
    rows, on = _encoder_differences(t, of_kind(c.signals, "encoder"), ["g3"], "encoder-minus-G3")
    ok = bool((rows["ci_low"] > 0).all())
    by_subtype = f" {deciding_subtype_sentence(t['gate_by_subtype'])}" if "gate_by_subtype" in t else ""
    return _verdict(ok), f"on {on}: " + "; ".join(
        f"{r.a} - G3 {r.difference:+.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]" for r in rows.itertuples()) + by_subtype


@claim('The two encoders are not separated',
       'bootstrap (utterance clusters; mismatch slice, else all in vs out): encoder - second encoder interval '
       'contains 0', "abstention")
def encoders_not_separated(t, c: Context):
    encoders = of_kind(c.signals, "encoder")
    rows, on = _encoder_differences(t, encoders, encoders, "encoder-minus-encoder")
    r = rows.iloc[0]
    return _verdict(r["ci_low"] <= 0 <= r["ci_high"]), (
        f"on {on}: {r['a']} - {r['b']} {r['difference']:+.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]")


@claim('Calibration leaves mismatch AUC unchanged while lowering ECE',
       'calibration: G3 Platt |d auc_mismatch| <= 0.01 and ece_all lower', "abstention")
def calibration_keeps_auc(t, c: Context):
    cols = ("auc_mismatch", "ece_all")
    none, platt = _row(t, "calibration", cols, gate="g3", method="none"), _row(t, "calibration", cols, gate="g3", method="platt")
    if np.isnan(none["auc_mismatch"]):
        raise Missing("calibration.csv has no G3 auc_mismatch (no mismatch slice)")
    d = platt["auc_mismatch"] - none["auc_mismatch"]
    ok = abs(d) <= 0.01 and platt["ece_all"] < none["ece_all"]
    return _verdict(ok), (f"G3 ECE {none['ece_all']:.3f} -> {platt['ece_all']:.3f}; mismatch AUC "
                          f"{none['auc_mismatch']:.3f} -> {platt['auc_mismatch']:.3f}")


@claim('BM25 beats the encoders on matched vocabulary and loses on paraphrase',
       'selection (all languages): BM25 top-1 > each encoder on match, < on mismatch', "selection")
def bm25_match_vs_paraphrase(t, c: Context):
    df = _table(t, "selection", "ranker", "lang", "slice", "top1")
    df = df[df["lang"] == "all"]
    lacking = [s for s in ("match", "mismatch") if not (df["slice"] == s).any()]
    if lacking:
        raise Missing(f"selection.csv has no {' or '.join(lacking)} slice rows (lang=all): this catalog has no "
                      "vocabulary split")
    piv = df.pivot(index="ranker", columns="slice", values="top1")
    lex = c.roles.lexical
    if lex not in piv.index:
        raise Missing(f"selection.csv has no rows for the lexical ranker {lex} (roles.lexical)")
    others = [c.signals[n].ranker for n in of_kind(c.signals, "encoder") if c.signals[n].ranker in piv.index]
    ok = all(piv.loc[lex, "match"] > piv.loc[o, "match"] and piv.loc[lex, "mismatch"] < piv.loc[o, "mismatch"] for o in others)
    return _verdict(ok), "; ".join(f"{r}: match {piv.loc[r, 'match']:.3f}, mismatch {piv.loc[r, 'mismatch']:.3f}"
                                   for r in [lex, *others])


@claim('The crossover moves with the candidate count',
       'crossover: p* spans >= 0.05 across k, or exists at some k and not others', "selection")
def crossover_moves(t, c: Context):
    df = _table(t, "crossover", "encoder", "k", "crossover_p", "note")
    if df["crossover_p"].isna().all() and df["note"].str.startswith("not computable").all():
        raise Missing("crossover.csv has no crossover at any k (no match/mismatch slices)")
    parts, ok = [], False
    for enc, d in df.groupby("encoder"):
        p = d["crossover_p"].dropna()
        spread = p.max() - p.min() if len(p) > 1 else 0.0
        ok |= spread >= 0.05 or (len(p) and len(p) < len(d))
        parts.append(f"{enc}: " + ", ".join(f"k={int(r.k)}: {'none' if np.isnan(r.crossover_p) else f'{r.crossover_p:.3f}'}"
                                          for r in d.itertuples()))
    return _verdict(bool(ok)), "; ".join(parts)


@claim('(beyond the paper) A BM25 + encoder hybrid makes the choice unnecessary',
       'crossover: some hybrid is within the better member\'s seed spread on match and mismatch at every k', "selection")
def hybrid_removes_choice(t, c: Context):
    df = _table(t, "crossover", "encoder", "k")
    cols = [col for col in df.columns if col.endswith("_within_spread")]
    if not cols:
        raise Missing("crossover.csv has no hybrid columns (no ranker of type hybrid with BM25 and an encoder)")
    if df[cols].isna().all().all():
        raise Missing("crossover.csv has no hybrid values (no match/mismatch slices)")
    parts, ok = [], False
    for col in cols:
        d = df.dropna(subset=[col])
        hybrid = col.removesuffix("_within_spread")
        within = d[col].astype(str) == "True"
        ok |= bool(len(d)) and bool(within.all())
        parts.append(f"{hybrid} ({', '.join(d['encoder'].unique())}): within at k = "
                     f"{', '.join(str(int(k)) for k in d.loc[within, 'k']) or 'none'} of "
                     f"{', '.join(str(int(k)) for k in d['k'])}")
    return _verdict(ok), "; ".join(parts)


@claim('Rerankers recover part of the top-1/top-5 gap',
       'rerank (all): recovered_share > 0 for every encoder reranker', "selection")
def rerankers_recover(t, c: Context):
    df = _table(t, "rerank", "lang", "slice", "reranker", "recovered_share")
    encoders = [c.signals[n].ranker for n in of_kind(c.signals, "encoder")]  # the paper's rerankers (no hybrids)
    df = df[(df["lang"] == "all") & (df["slice"] == "all") & df["reranker"].isin(encoders)]
    if df.empty:
        raise Missing("rerank.csv has no encoder rows where lang=all, slice=all")
    return _verdict(bool((df["recovered_share"] > 0).all())), "; ".join(
        f"{r.reranker}: {r.recovered_share:+.1%}" for r in df.itertuples())


@claim('Split pipelines do not beat shared ones on MCC',
       'signal_diversity: the shared - split interval is not entirely below 0', "routing")
def split_not_better(t, c: Context):
    r = _row(t, "signal_diversity", ("mcc", "ci_low", "ci_high"), group="difference")
    return _verdict(not r["ci_high"] < 0), f"shared - split MCC {r['mcc']:+.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"


def _reason(exc: Exception) -> str:
    """Why a claim is not computable, in words: Missing says it; anything else is named, never shown as a repr."""
    if isinstance(exc, Missing):
        return str(exc)
    detail = exc.args[0] if exc.args else ""
    return f"the tables do not have the shape this test reads ({type(exc).__name__}: {detail})"


def ledger(tables: dict, signals: dict[str, Signal], roles: Roles) -> pd.DataFrame:
    """Every claim with its family, test, verdict and evidence on one set's tables."""
    ctx, recs = Context(signals, roles), []
    for text, rule, test in CLAIMS:
        try:
            verdict, evidence = test(tables, ctx)
        except (Missing, KeyError, IndexError, ValueError) as exc:
            verdict, evidence = NOT_TESTABLE, _reason(exc)
        recs.append({"claim": text, "family": FAMILY[text], "test": rule, "verdict": verdict, "evidence": evidence})
    return pd.DataFrame(recs)
