"""The calibration study (tables/calibration.csv, reliability.csv): every studied gate's probability uncalibrated,
Platt-scaled and isotonic, out of fold (:mod:`.calibration`), with ECE/MCE and reliability curves."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.calibration import calibrate_oof, raw_probability
from ..core.signals import Signal, studied_gates
from ..metrics import auc, calibration_errors, reliability_curve
from ..tables import write_table


def calibration_frames(signals: pd.DataFrame, gates: list[Signal], bins: int):
    y, fold = signals["in_catalog"].to_numpy(), signals["fold"].to_numpy()
    mism = signals["slice"].isin(["mismatch", "out"]).to_numpy()
    recs, curves = [], []
    for sig in gates:
        gate, score = sig.name, signals[sig.name].to_numpy()
        probs = {"none": raw_probability(sig, score), "platt": calibrate_oof(score, y, fold, "platt"),
                 "isotonic": calibrate_oof(score, y, fold, "isotonic")}
        for method, p in probs.items():
            rec = {"gate": gate, "method": method}
            for sl, m in (("all", np.ones(len(y), bool)), ("mismatch", mism)):
                ece, mce = calibration_errors(p[m], y[m], bins)
                rec[f"ece_{sl}"], rec[f"mce_{sl}"], rec[f"auc_{sl}"] = ece, mce, auc(p[m], y[m])
                for b, mp, fp, n in reliability_curve(p[m], y[m], bins):
                    curves.append({"gate": gate, "method": method, "slice": sl, "bin": b, "mean_predicted": mp,
                                   "fraction_in_catalog": fp, "n": n})
            recs.append(rec)
    return pd.DataFrame(recs), pd.DataFrame(curves)


def write_calibration(exp):
    """The rule's named outputs ``table`` and ``curves`` (reliability curves) of every studied gate, from its
    ``signals`` input, over ``gate.calibration_bins`` bins."""
    reg, bins, seed, outputs = exp.signals, exp.gate.calibration_bins, exp.seed, exp.output
    signals = pd.read_csv(exp.input.signals)
    signals = signals[signals["slice"] != "mismatch_hard"]  # the main set only
    table, curves = calibration_frames(signals, [reg[g] for g in studied_gates(reg)], bins)
    write_table(table, outputs.table, "Calibration of the gates (out of fold)",
                f"ECE/MCE over {bins} equal-width bins, on all utterances and on mismatch-in vs out.", seed,
                paper=("calibration.",))
    write_table(curves, outputs.curves, "Reliability curves (data of figure 3)", "", seed)
    return table
