"""Export a (ranker, gate, band) pipeline of an experiment as a router artifact.

Unlike the pipelines rule, which measures thresholds out of fold, an export fits
the Platt calibrator and the band thresholds on every utterance of the main set
at once, under the same danger budget and ask cap: these are the numbers a
deployed router ships with. The artifact holds no encoder weights; the manifest
names the encoder (backend, model, revision) and the runtime loads it.
"""
from __future__ import annotations

import hashlib
import json
import logging
import platform
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import sklearn

from .. import __version__, io
from ..config import config_hash, run, section
from ..errors import InputError
from ..gate.calibration import fit_platt, platt_probability
from ..gate.signals import gate_signal, registry, signal_rows
from ..outdir import write_folder
from ..retrieval.rankers import RankerSpec, encoder_rankers, fit_ranker
from ..retrieval.scores import load_scores, mode_note, route_step, top_actions
from ..routing.baselines import Gold, Study
from ..routing.pipelines import band_decisions, fit_band
from .runtime import FORMAT, MANIFEST

log = logging.getLogger(__name__)


def _entry(data: bytes) -> dict:
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def fitted_router(rows, catalog, scores: dict, signals: pd.DataFrame, pipeline: str, study: Study, lexical: str) -> dict:
    """Calibrator and thresholds of ``pipeline`` fitted on ``rows`` (the main set), with their in-sample rates."""
    p = study.routing.pipelines[pipeline]
    g = Gold(rows, catalog)
    score = signal_rows(signals, rows)[gate_signal(study.signals, p["gate"]).name].to_numpy()
    coef, intercept = fit_platt(score, g.in_catalog.astype(int))
    prob = platt_probability(score, coef, intercept)
    lo, hi = fit_band(scores[p["ranker"]], scores[lexical], rows, g, prob, study.routing, study.gate.danger_budget)
    kind, _ = band_decisions(prob, lo, hi, top_actions(scores[p["ranker"]], rows)[:, 0], route_step(scores[lexical], rows))
    return {"calibrator": {"method": "platt", "coef": coef, "intercept": intercept, "fitted_on": len(rows)},
            "thresholds": {"execute": float(hi), "confirm": float(lo), "band_top": study.routing.band_top,
                           "danger_budget": study.gate.danger_budget, "ask_cap": study.routing.ask_cap,
                           "in_sample": {"danger_rate": float((g.delegate & (kind == "action")).mean()),
                                         "ask_rate": float((kind == "ask").mean())}}}


def export_router(inputs, score_paths: dict, out_dir, pipeline: str, rankers: dict, study: Study,
                  provenance: dict, force: bool = False) -> tuple[dict, str]:
    """Write ``out_dir``/{router.json, bm25.index, catalog.jsonl} (:func:`toolgate.outdir.write_folder`, so an
    existing folder is refused unless ``force``); return the manifest and how the folder was written.

    ``inputs``: named ``catalog``, ``utterances``, ``signals`` (signals.csv); ``provenance``: experiment, config_hash, lexical ranker
    name, limits (max_chars, top_k).
    """
    run, lexical = study.run, provenance["lexical"]
    catalog, rows = io.load_inputs(inputs.catalog, inputs.utterances, run.langs)
    rows = io.main_set(rows)
    scores = {n: load_scores(p) for n, p in score_paths.items()}
    fit = fitted_router(rows, catalog, scores, pd.read_csv(inputs.signals), pipeline, study, lexical)
    p = study.routing.pipelines[pipeline]

    def full(name):  # every parameter in the manifest: the runtime rebuilds the ranker from it alone
        return RankerSpec.of(rankers[name]).entry

    index = fit_ranker(rankers[lexical], catalog, run.langs, run.text.ngram, run.text.pad).index.to_bytes()
    cat_bytes = Path(inputs.catalog).read_bytes()
    manifest = {
        "format": FORMAT, "toolgate_version": __version__,
        "experiment": provenance["experiment"], "config_hash": provenance["config_hash"], "seed": run.seed,
        "pipeline": {"name": pipeline, "ranker": p["ranker"], "gate": p["gate"],
                     "ranker_spec": full(p["ranker"]), "gate_spec": full(p["gate"])},
        "lexical": {"name": lexical, "spec": full(lexical)},
        "text": {"ngram": run.text.ngram, "pad": run.text.pad}, "langs": list(run.langs),
        **fit,
        "catalog": {"sha256": hashlib.sha256(cat_bytes).hexdigest(), "source": str(inputs.catalog),
                    "actions": sum(t["kind"] == "action" for t in catalog),
                    "routes": [t["id"] for t in catalog if t["kind"] == "route"]},
        "fitted_candidates": mode_note(rows),  # the tools each request saw when the thresholds were fitted
        "limits": provenance["limits"],
        "files": {"bm25.index": _entry(index), "catalog.jsonl": _entry(cat_bytes)},
        "versions": {"python": platform.python_version(), "numpy": np.__version__, "scikit-learn": sklearn.__version__},
    }
    out = Path(out_dir)

    def write(tmp: Path) -> None:
        (tmp / "bm25.index").write_bytes(index)
        (tmp / "catalog.jsonl").write_bytes(cat_bytes)
        (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    written = write_folder(out, MANIFEST, lambda m: list(m["files"]), write, force, allowed_output="router")
    size = len(index) + (out / MANIFEST).stat().st_size
    log.info("exported %s to %s: BM25 index %d bytes + manifest (gate payload) %d bytes = %.1f KB; catalog %d bytes",
             pipeline, out, len(index), (out / MANIFEST).stat().st_size, size / 1024, len(cat_bytes))
    return manifest, written


def export_experiment(cfg: dict, config_path, pipeline: str | None, out_dir=None, force: bool = False):
    """(folder, manifest, how written): ``toolgate export`` of a resolved config whose workflow has run.

    ``pipeline``: a name under routing.pipelines (default: the first of router.pipelines); ``out_dir``: default
    ``results/<experiment>/router/<pipeline>``. A missing pipeline or score file is an InputError naming it.
    """
    res, pipeline = Path("results") / cfg["experiment"], pipeline or cfg["router"]["pipelines"][0]
    if pipeline not in cfg["routing"]["pipelines"]:
        raise InputError(config_path, f"unknown pipeline '{pipeline}' (known: {', '.join(cfg['routing']['pipelines'])})",
                         field="routing.pipelines")
    scores = {n: res / "scores" / f"{n}.npz" for n in cfg["rankers"]}
    signals = res / "gate" / "signals.csv"
    missing = [p for p in [*scores.values(), signals] if not p.exists()]
    if missing:
        raise InputError(missing[0], f"does not exist; run the workflow for {config_path} first (snakemake "
                                     f"--configfile {config_path} {signals})")
    study = Study(run(cfg["seed"], cfg["langs"], cfg["text"]), section("gate", cfg["gate"]),
                  section("routing", cfg["routing"]), registry(cfg["roles"]["lexical"], encoder_rankers(cfg["rankers"])))
    out = Path(out_dir or res / "router" / pipeline)
    provenance = {"experiment": cfg["experiment"], "config_hash": config_hash(cfg), "lexical": cfg["roles"]["lexical"],
                  "limits": {k: cfg["router"][k] for k in ("max_chars", "top_k")}}
    m, written = export_router(SimpleNamespace(catalog=cfg["catalog"], utterances=res / "data" / "utterances.jsonl", signals=signals), scores, out, pipeline,
                               cfg["rankers"], study, provenance, force)
    return out, m, written
