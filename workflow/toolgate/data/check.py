"""The design check: the utterance set must carry the paper's documented design before any ranker runs.

Each statistic is computed from the texts alone (character n-gram Jaccard with
the gold text, lengths) and from the blind annotation passes; its target comes
from the config's ``data_check`` section, set from the paper's text. A failure
names the statistic, its value and its target, and nothing is written.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import DataCheck
from ..core import io
from .annotations import agreement_frame, joined, load_passes
from .card import jaccard_frame, length_auc, ngram_length


class DataCheckFailed(ValueError):
    """The utterance set departs from its design; the message names the statistic."""


def design_statistics(rows, catalog, check: DataCheck, ngram: int) -> list[tuple[str, float, str, bool]]:
    """(statistic, value, target, ok) for every configured target; rows are the main set."""
    jac = jaccard_frame(rows, catalog, ngram)
    out = []
    for lang, targets in check.jaccard_medians.items():
        for slice_, target in targets.items():
            v = jac[(jac["lang"] == lang) & (jac["slice"] == slice_)]["jaccard"].median()
            out.append((f"jaccard median ({lang}, {slice_})", v, f"{target} +- {check.tolerance}",
                        bool(abs(v - target) <= check.tolerance + 1e-12)))
    langs = sorted(jac["lang"].unique())
    if check.quartiles_separate:
        for lang in langs:
            q3 = jac[(jac["lang"] == lang) & (jac["slice"] == "mismatch")]["jaccard"].quantile(0.75)
            q1 = jac[(jac["lang"] == lang) & (jac["slice"] == "match")]["jaccard"].quantile(0.25)
            out.append((f"mismatch q3 below match q1 ({lang})", q3, f"< {q1:.4f}", bool(q3 < q1)))
    for lang, cap in check.zero_overlap_max.items():
        share = (jac[(jac["lang"] == lang) & (jac["slice"] == "mismatch")]["jaccard"] == 0).mean()
        out.append((f"mismatch items with zero overlap ({lang})", share, f"<= {cap}", bool(share <= cap)))
    if check.out_longer:
        for lang in langs:
            length = {s: np.median([ngram_length(r, ngram) for r in rows if r["lang"] == lang and r["slice"] == s])
                      for s in ("out", "mismatch")}
            out.append((f"out median length above mismatch ({lang})", length["out"], f"> {length['mismatch']}",
                        bool(length["out"] > length["mismatch"])))
    if check.length_auc:
        # The paper gives one pooled value; each language's is reported beside it, not held to a target.
        target, tol = check.length_auc["target"], check.length_auc["tolerance"]
        for lang, v in length_auc(rows, ngram).items():
            pooled = lang == "all"
            out.append((f"length auc, out vs mismatch ({lang})", v, f"{target} +- {tol}" if pooled else "reported",
                        bool(abs(v - target) <= tol + 1e-12) or not pooled))
    return out


def annotation_statistics(rows, catalog, folder, check: DataCheck) -> list[tuple[str, float, str, bool]]:
    """Each pass's agreement with gold on match and on mismatch, and its coverage of those items."""
    passes = load_passes(folder, catalog)
    if not passes:
        return [("annotation passes", 0, f"at least one in {folder}", False)]
    agree = agreement_frame(joined(rows, passes), passes)
    agree = agree[(agree["lang"] == "all") & agree["slice"].isin(["match", "mismatch"]) & agree["compare"].str.endswith("vs gold")]
    out = []
    for r in agree.itertuples():
        out.append((f"annotation coverage ({r.compare}, {r.slice})", r.annotated, f"= {r.n}", bool(r.annotated == r.n)))
        out.append((f"annotation agreement ({r.compare}, {r.slice})", r.agreement, f">= {check.min_agreement}",
                    bool(r.agreement >= check.min_agreement)))
    return out


def write_data_check(exp) -> list:
    """Run the configured checks (``exp.data_check``; ``exp.annotations``: the passes' folder, or empty); raise
    DataCheckFailed naming the first failing statistic, else write ``exp.output.report``."""
    catalog, check, annotations = exp.catalog, exp.data_check, exp.annotations
    stats = []
    if check.enabled:
        main = exp.main
        stats = design_statistics(main, catalog, check, exp.run.text.ngram)
        if check.min_agreement > 0 and annotations:
            stats += annotation_statistics(main, catalog, annotations, check)
    table = pd.DataFrame(stats, columns=["statistic", "value", "target", "ok"])
    for r in table.itertuples():
        print(f"{'ok  ' if r.ok else 'FAIL'} {r.statistic}: {r.value:.4f} (target {r.target})")
    failed = table[~table["ok"]]
    if not failed.empty:
        r = failed.iloc[0]
        raise DataCheckFailed(f"data_check: {r['statistic']} is {r['value']:.4f}, target {r['target']} "
                              f"({len(failed)} of {len(table)} checks fail; see the rule's log)")
    io.write_json(exp.output.report, {"enabled": check.enabled, "checks": [
        {"statistic": s, "value": round(float(v), 4), "target": t, "ok": ok} for s, v, t, ok in stats]})
    return stats
