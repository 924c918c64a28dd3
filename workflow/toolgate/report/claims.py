"""The paper's claims as checkable statements over result tables.

A test returns (verdict, the deciding number against its threshold, every number it read), or raises
:class:`Missing` and the ledger says "not testable" and why. The thresholds that make "several-fold" or "far better"
a test are fixed here, before any result is read, and stated once with the claim.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..config import Roles
from ..core.signals import Signal, of_kind
from ..gate.bootstrap import NO_SLICE, slice_title
from ..gate.subtype import deciding_subtype_sentence


@dataclass(frozen=True)
class Context:
    signals: dict[str, Signal]
    roles: Roles


class Missing(Exception):
    """A claim's input is absent; the message says which table, column, row or slice, in words."""


CLAIMS: list[tuple[str, str, object]] = []
FAMILY: dict[str, str] = {}  # claim text -> selection / abstention / routing
USES: dict[str, tuple[str, ...]] = {}  # claim text -> the roles of the paper's encoders its test runs on
NOT_TESTABLE = "not testable"
MARK = {"holds": "✓", "does not hold": "✗"}


def claim(text: str, rule: str, family: str, uses: tuple[str, ...] = ()):
    """Register a claim's test with its statement, its test and threshold in words, its family and the encoder
    roles (``encoder``, ``second_encoder``) it runs on."""
    def register(test):
        CLAIMS.append((text, rule, test))
        FAMILY[text] = family
        USES[text] = uses
        return test
    return register


def _iv(lo, hi) -> str:
    return f"[{lo:.3f}, {hi:.3f}]"


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


def _versus_ladder(t) -> tuple[bool, str, str]:
    """(ok, deciding, evidence): ok False when the gated - ladder accuracy interval lies entirely below 0."""
    key = "gated_minus_single_pool_ladder"
    r = _row(t, "routing_baselines", ("gated", "single_pool_ladder", key, f"{key}_ci_low", f"{key}_ci_high"),
             metric="accuracy")
    lo, hi = r[f"{key}_ci_low"], r[f"{key}_ci_high"]
    if np.isnan(hi):
        raise Missing(f"routing_baselines.csv has no interval for {key} (metric=accuracy)")
    ok = bool(hi >= 0)
    return ok, (f"gated - ladder {r[key]:+.3f} {_iv(lo, hi)}: upper end {'>=' if ok else '<'} 0"), (
        f"accuracy gated {r['gated']:.3f} vs ladder {r['single_pool_ladder']:.3f}: {r[key]:+.3f} {_iv(lo, hi)}")


# The paper states two routing results (Section 3): fewer delegate-to-skill errors against standalone BM25, and
# better accuracy against the single-pool ladder. They are two claims; neither test reads the other's table row.
@claim('The gate cuts delegate-to-skill errors several-fold against standalone BM25',
       'several-fold: standalone BM25 / gated delegate-to-skill errors >= 3 (routing_baselines)', "routing",
       ("encoder",))
def gate_cuts_errors(t, c: Context):
    r = _row(t, "routing_baselines", ("standalone_bm25_count", "standalone_bm25_of", "gated_count", "gated_of"),
             metric="delegate_to_skill")
    a, b = r["standalone_bm25_count"], r["gated_count"]
    ratio = a / b if b else np.inf
    ok = ratio >= 3
    try:  # fewer errors can come from delegating everything: the ledger says how much the gated router delegates
        d = _row(t, "routing_baselines", ("gated_count", "gated_of"), metric="delegations")
        delegated = f"; it delegates {int(d['gated_count'])} of {int(d['gated_of'])} requests"
    except Missing:
        delegated = ""
    return _verdict(ok), f"{int(a)} -> {int(b)} errors: {ratio:.1f}x {'>=' if ok else '<'} 3", (
        f"{int(a)}/{int(r['standalone_bm25_of'])} -> {int(b)}/{int(r['gated_of'])} ({ratio:.1f}x){delegated}")


@claim('The gated router is at least as accurate as the single-pool ladder',
       'at least as accurate: the upper end of the gated - ladder accuracy interval >= 0 (routing_baselines)',
       "routing", ("encoder",))
def gated_not_below_ladder(t, c: Context):
    ok, deciding, evidence = _versus_ladder(t)
    return _verdict(ok), deciding, evidence


@claim('Every single BM25 score feature stays below 0.70 AUC on mismatch-in vs out',
       "stays below: the highest of the six raw features' mismatch AUCs < 0.70 (gate_auc)", "abstention")
def features_below(t, c: Context):
    df = _table(t, "gate_auc", "signal", "auc_mismatch")
    six = df[df["signal"].isin(of_kind(c.signals, "score_feature"))].dropna(subset=["auc_mismatch"])
    if six.empty:
        raise Missing("gate_auc.csv has no auc_mismatch for the BM25 score features (no mismatch slice)")
    top = six.loc[six["auc_mismatch"].idxmax()]
    ok = bool(top["auc_mismatch"] < 0.70)
    of = "" if len(six) == 6 else f" ({len(six)} of the 6 features have a value)"
    return _verdict(ok and len(six) == 6), f"max {top['auc_mismatch']:.3f} ({top['signal']}) {'<' if ok else '>='} 0.70{of}", (
        f"range {six['auc_mismatch'].min():.3f}-{six['auc_mismatch'].max():.3f} (max: {top['signal']})")


@claim('G3 is far better on match-in than on mismatch-in',
       'far better: G3 AUC on match minus on mismatch >= 0.15 (gate_auc)', "abstention")
def g3_match_vs_mismatch(t, c: Context):
    r = _row(t, "gate_auc", ("auc_match", "auc_mismatch"), signal="g3")
    if np.isnan(r["auc_match"]) or np.isnan(r["auc_mismatch"]):
        raise Missing("gate_auc.csv has no G3 auc_match/auc_mismatch (no match/mismatch slices)")
    gap = r["auc_match"] - r["auc_mismatch"]
    ok = gap >= 0.15
    return _verdict(ok), f"gap {gap:+.3f} {'>=' if ok else '<'} 0.15", (
        f"match {r['auc_match']:.3f} vs mismatch {r['auc_mismatch']:.3f} (gap {gap:+.3f})")


@claim('Query length carries most of G3',
       'carries most: the G3 - six-feature AUC interval has lower end > 0, and the six features alone reach < 0.60 '
       'on mismatch (bootstrap, gate_auc)', "abstention")
def length_carries_g3(t, c: Context):
    unit = _finest_unit(_table(t, "bootstrap", "cluster_unit"))
    b = _row(t, "bootstrap", ("slice", "difference", "ci_low", "ci_high", "excludes_zero", "auc_a", "auc_b"),
             cluster_unit=unit, a="g3", b="g3_no_length")
    if b["slice"] != "mismatch":
        raise Missing(f"bootstrap.csv has no mismatch-slice rows (its slice: {b['slice']})")
    r = _row(t, "gate_auc", ("auc_mismatch",), signal="g3_no_length")
    above, alone = bool(b["ci_low"] > 0), bool(r["auc_mismatch"] < 0.6)
    return _verdict(above and alone), (
        f"length adds {b['difference']:+.3f} {_iv(b['ci_low'], b['ci_high'])}: lower end {'>' if above else '<='} 0; "
        f"six features {r['auc_mismatch']:.3f} {'<' if alone else '>='} 0.60"), (
        f"G3 {b['auc_a']:.3f}, without length {b['auc_b']:.3f}; length adds {b['difference']:+.3f} "
        f"{_iv(b['ci_low'], b['ci_high'])}")


@claim('Each encoder gate beats G3 on mismatch-in vs out',
       'beats: every encoder - G3 AUC interval has lower end > 0 (bootstrap, utterance clusters; mismatch slice, else '
       'all in vs out)', "abstention", ("encoder", "second_encoder"))
def encoders_beat_g3(t, c: Context):
    rows, on = _encoder_differences(t, of_kind(c.signals, "encoder"), ["g3"], "encoder-minus-G3")
    ok = bool((rows["ci_low"] > 0).all())
    low = rows.loc[rows["ci_low"].idxmin()]  # the weakest encoder decides
    where = "" if on.startswith("mismatch") else f"; on {on}"
    by_subtype = f" {deciding_subtype_sentence(t['gate_by_subtype'])}" if "gate_by_subtype" in t else ""
    return _verdict(ok), (f"{low['a']} - G3 {low['difference']:+.3f} {_iv(low['ci_low'], low['ci_high'])}: lower "
                          f"end {'>' if ok else '<='} 0{where}"), f"on {on}: " + "; ".join(
        f"{r.a} - G3 {r.difference:+.3f} {_iv(r.ci_low, r.ci_high)}" for r in rows.itertuples()) + by_subtype


@claim('The two encoders are not separated',
       'not separated: the encoder - second encoder AUC interval has lower end <= 0 <= upper end (bootstrap, '
       'utterance clusters; mismatch slice, else all in vs out)', "abstention", ("encoder", "second_encoder"))
def encoders_not_separated(t, c: Context):
    encoders = of_kind(c.signals, "encoder")
    rows, on = _encoder_differences(t, encoders, encoders, "encoder-minus-encoder")
    r = rows.iloc[0]
    ok = bool(r["ci_low"] <= 0 <= r["ci_high"])
    end = (f"{r['ci_low']:.3f} <= 0 <= {r['ci_high']:.3f}" if ok else
           "lower end > 0" if r["ci_low"] > 0 else "upper end < 0")
    where = "" if on.startswith("mismatch") else f"; on {on}"
    return _verdict(ok), f"{r['a']} - {r['b']} {r['difference']:+.3f} {_iv(r['ci_low'], r['ci_high'])}: {end}{where}", (
        f"on {on}: {r['a']} - {r['b']} {r['difference']:+.3f} {_iv(r['ci_low'], r['ci_high'])}")


@claim('Calibration leaves mismatch AUC unchanged while lowering ECE',
       'unchanged: |Platt - raw G3 mismatch AUC| <= 0.01, and Platt ECE below raw (calibration)', "abstention")
def calibration_keeps_auc(t, c: Context):
    cols = ("auc_mismatch", "ece_all")
    none, platt = _row(t, "calibration", cols, gate="g3", method="none"), _row(t, "calibration", cols, gate="g3", method="platt")
    if np.isnan(none["auc_mismatch"]):
        raise Missing("calibration.csv has no G3 auc_mismatch (no mismatch slice)")
    d = platt["auc_mismatch"] - none["auc_mismatch"]
    same, lower = bool(abs(d) <= 0.01), bool(platt["ece_all"] < none["ece_all"])
    return _verdict(same and lower), (
        f"AUC change {d:+.3f}: |change| {'<=' if same else '>'} 0.01; ECE {none['ece_all']:.3f} -> {platt['ece_all']:.3f} "
        f"({'lower' if lower else 'not lower'})"), (f"G3 ECE {none['ece_all']:.3f} -> {platt['ece_all']:.3f}; mismatch AUC "
                                                     f"{none['auc_mismatch']:.3f} -> {platt['auc_mismatch']:.3f}")


@claim('BM25 beats the encoders on matched vocabulary and loses on paraphrase',
       'beats and loses: BM25 top-1 minus each encoder\'s > 0 on match and < 0 on mismatch (selection, all '
       'languages)', "selection", ("encoder", "second_encoder"))
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
    if not others:
        raise Missing("selection.csv has no rows for the encoders")
    # the closest encoder decides each side: the smallest lead on match, the largest on mismatch
    lead = {s: piv.loc[lex, s] - piv.loc[others, s] for s in ("match", "mismatch")}
    m, mm = lead["match"].idxmin(), lead["mismatch"].idxmax()
    beats, loses = bool(lead["match"][m] > 0), bool(lead["mismatch"][mm] < 0)
    return _verdict(beats and loses), (
        f"match: {lex} - {m} {lead['match'][m]:+.3f} {'>' if beats else '<='} 0; mismatch: {lex} - {mm} "
        f"{lead['mismatch'][mm]:+.3f} {'<' if loses else '>='} 0"), "; ".join(
        f"{r}: match {piv.loc[r, 'match']:.3f}, mismatch {piv.loc[r, 'mismatch']:.3f}" for r in [lex, *others])


@claim('The crossover moves with the candidate count',
       'moves: for every encoder, a crossover p* exists at some k and either spans >= 0.05 across k or is absent '
       'at another k (crossover)', "selection", ("encoder", "second_encoder"))
def crossover_moves(t, c: Context):
    df = _table(t, "crossover", "encoder", "k", "crossover_p", "note")
    if df["crossover_p"].isna().all() and df["note"].str.startswith("not computable").all():
        raise Missing("crossover.csv has no crossover at any k (no match/mismatch slices)")
    parts, deciding, ok = [], [], True
    for enc, d in df.groupby("encoder", sort=False):
        p = d["crossover_p"].dropna()
        # a crossover that exists nowhere cannot move: one ranker wins at every match share and every k
        span = p.max() - p.min() if len(p) else np.nan
        moves = bool(len(p)) and (span >= 0.05 or len(p) < len(d))
        ok &= moves
        deciding.append(f"{enc}: no crossover at any k (0 of {len(d)} < 1)" if not len(p) else
                        f"{enc}: span {span:.3f} {'>=' if span >= 0.05 else '<'} 0.05"
                        + (f", none at {len(d) - len(p)} of {len(d)} k" if len(p) < len(d) else ""))
        parts.append(f"{enc}: " + ", ".join(f"k={int(r.k)}: {'none' if np.isnan(r.crossover_p) else f'{r.crossover_p:.3f}'}"
                                          for r in d.itertuples()))
    return _verdict(bool(ok)), "; ".join(deciding), "; ".join(parts)


@claim('(beyond the paper) A BM25 + encoder hybrid makes the choice unnecessary',
       'unnecessary: the candidate counts k at which one hybrid is within the better member\'s seed spread on '
       'match and on mismatch = all k (crossover)', "selection", ("encoder",))
def hybrid_removes_choice(t, c: Context):
    df = _table(t, "crossover", "encoder", "k")
    cols = [col for col in df.columns if col.endswith("_within_spread")]
    if not cols:
        raise Missing("crossover.csv has no hybrid columns (no ranker of type hybrid with BM25 and an encoder)")
    if df[cols].isna().all().all():
        raise Missing("crossover.csv has no hybrid values (no match/mismatch slices)")
    parts, best = [], None
    for col in cols:
        d = df.dropna(subset=[col])
        hybrid = col.removesuffix("_within_spread")
        within = d[col].astype(str) == "True"
        if len(d) and (best is None or within.mean() > best[1] / best[2]):
            best = (hybrid, int(within.sum()), len(d))
        parts.append(f"{hybrid} ({', '.join(d['encoder'].unique())}): within at k = "
                     f"{', '.join(str(int(k)) for k in d.loc[within, 'k']) or 'none'} of "
                     f"{', '.join(str(int(k)) for k in d['k'])}")
    ok = best is not None and best[1] == best[2]
    return _verdict(ok), f"{best[0]} within at {best[1]} of {best[2]} k {'=' if ok else '<'} all {best[2]}", "; ".join(parts)


@claim('Rerankers recover part of the top-1/top-5 gap',
       'recover part: every encoder reranker\'s recovered share of the gap > 0 (rerank, all)', "selection",
       ("encoder", "second_encoder"))
def rerankers_recover(t, c: Context):
    df = _table(t, "rerank", "lang", "slice", "reranker", "recovered_share")
    encoders = [c.signals[n].ranker for n in of_kind(c.signals, "encoder")]  # the paper's rerankers (no hybrids)
    df = df[(df["lang"] == "all") & (df["slice"] == "all") & df["reranker"].isin(encoders)]
    if df.empty:
        raise Missing("rerank.csv has no encoder rows where lang=all, slice=all")
    low = df.loc[df["recovered_share"].idxmin()]
    ok = bool(low["recovered_share"] > 0)
    return _verdict(ok), f"lowest {low['reranker']} {low['recovered_share']:+.1%} {'>' if ok else '<='} 0", "; ".join(
        f"{r.reranker}: {r.recovered_share:+.1%}" for r in df.itertuples())


@claim('Split pipelines do not beat shared ones on MCC',
       'do not beat: the upper end of the shared - split MCC interval >= 0 (signal_diversity)', "routing",
       ("encoder", "second_encoder"))
def split_not_better(t, c: Context):
    r = _row(t, "signal_diversity", ("mcc", "ci_low", "ci_high"), group="difference")
    ok = not r["ci_high"] < 0
    return _verdict(ok), f"shared - split {r['mcc']:+.3f} {_iv(r['ci_low'], r['ci_high'])}: upper end {'>=' if ok else '<'} 0", (
        f"shared - split MCC {r['mcc']:+.3f} {_iv(r['ci_low'], r['ci_high'])}")


# Transfer (gate_loco.csv, the rows tested on this set): the paper's argument for spending the encoder on
# abstention, carried across catalogs (the paper does not test it): a BM25-score gate is a property of one catalog
# while a frozen encoder's similarity carries over.
TRANSFER_LOSS = 0.05  # "loses its separation": a transferred AUC more than this below the gate's within-set AUC


def _loco(t) -> pd.DataFrame:
    return _table(t, "gate_loco", "gate", "test_set", "mode", "fit_set", "auc", "ci_low", "ci_high")


@claim('A gate of BM25 score features fitted on another catalog loses its separation on this one',
       f'loses: G3 within the set minus G3 fitted on another set and applied unchanged > {TRANSFER_LOSS}, for every '
       'other set (gate_loco)', "transfer")
def bm25_gate_does_not_transfer(t, c: Context):
    rows = _loco(t)
    g3 = rows[rows["gate"] == "g3"]
    within, moved = g3[g3["mode"] == "within"], g3[g3["mode"] == "transfer"]
    if within.empty or moved.empty:
        raise Missing("gate_loco.csv has no G3 transferred to this set from another (one set, or the external "
                      "study off)")
    w = float(within["auc"].iloc[0])
    best = moved.loc[moved["auc"].idxmax()]  # the smallest loss decides
    ok = bool(w - best["auc"] > TRANSFER_LOSS)
    return _verdict(ok), (f"fitted on {best['fit_set']} {best['auc']:.3f} {_iv(best['ci_low'], best['ci_high'])} vs "
                          f"{w:.3f} within: loss {w - best['auc']:+.3f} {'>' if ok else '<='} {TRANSFER_LOSS}"), (
        f"G3 within {w:.3f}; " + "; ".join(f"from {r.fit_set} {r.auc:.3f} {_iv(r.ci_low, r.ci_high)}"
                                          for r in moved.itertuples()))


@claim("A frozen encoder's similarity keeps its separation on a catalog it was never fitted on",
       'keeps: the lower end of every encoder max-cosine AUC interval on this set > 0.5, chance (it fits nothing, '
       'so every set is a new catalog to it; gate_loco)', "transfer", ("encoder", "second_encoder"))
def encoder_similarity_transfers(t, c: Context):
    rows = _loco(t)
    enc = rows[rows["gate"].isin(of_kind(c.signals, "encoder")) & (rows["mode"] == "raw")]
    if enc.empty:
        raise Missing("gate_loco.csv has no encoder max-cosine row on this set")
    low = enc.loc[enc["ci_low"].idxmin()]  # the weakest encoder decides
    ok = bool((enc["ci_low"] > 0.5).all())
    return _verdict(ok), (f"{low['gate']} {low['auc']:.3f} {_iv(low['ci_low'], low['ci_high'])}: lower end "
                          f"{'>' if ok else '<='} 0.5"), "; ".join(
        f"{r.gate} {r.auc:.3f} {_iv(r.ci_low, r.ci_high)}" for r in enc.itertuples())


def _reason(exc: Exception) -> str:
    """Why a claim is not computable, in words: Missing says it; anything else is named, never shown as a repr."""
    if isinstance(exc, Missing):
        return str(exc)
    detail = exc.args[0] if exc.args else ""
    return f"the tables do not have the shape this test reads ({type(exc).__name__}: {detail})"


def ledger(tables: dict, signals: dict[str, Signal], roles: Roles) -> pd.DataFrame:
    """Every claim with its family, test, verdict, deciding number and evidence on one set's tables (a claim that is
    not testable: deciding empty, evidence the reason)."""
    ctx, recs = Context(signals, roles), []
    for text, rule, test in CLAIMS:
        try:
            verdict, deciding, evidence = test(tables, ctx)
        except (Missing, KeyError, IndexError, ValueError) as exc:
            verdict, deciding, evidence = NOT_TESTABLE, "", _reason(exc)
        recs.append({"claim": text, "family": FAMILY[text], "test": rule, "verdict": verdict, "deciding": deciding,
                     "evidence": evidence})
    return pd.DataFrame(recs)
