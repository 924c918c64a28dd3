"""The entry points of the product stage: the selection table, the selected router's export (with the no-regret
guard) and ``toolgate export`` of a resolved config.

The selected router is the choice of :func:`toolgate.router.select.select`; before it is written, its nested
out-of-fold accuracy is compared with the single-pool ladder's on the same folds: when the interval of the
difference lies entirely below 0, the ladder ships in its place with a warning (the console, router.json's
``selection.fallback`` and the report), unless regret is allowed: then the selected router ships, with the warning.
A run never ends here without a router and a report.
"""
from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from ..core.errors import InputError
from ..core.scores import mode_note
from ..experiment import Experiment, Layout
from ..tables import write_table
from . import SELECTED
from .evaluation import loco_path
from .export import Route, export_router, pipeline_route
from .loco import held_out
from .select import LADDER, Selection, ask_cap, select

CONSOLE = logging.getLogger("toolgate.console")  # what a workflow job also shows on the terminal (smk.logged)


def selection_of(exp) -> Selection:
    """router.select on the experiment (its inputs an export's, :func:`toolgate.router.export.export_router`, and,
    where the external study ran, ``loco``: tables/router_loco.csv, the held-out catalogs the selection ranks by)."""
    loco = loco_path(exp.input)
    return select(exp, held_out(pd.read_csv(loco)) if loco else None)


def write_router_selection(sel: Selection, exp, out_csv) -> None:
    """tables/router_selection.csv of ``sel``, measured on the experiment's main set."""
    study, settings = exp.study, exp.router
    write_table(sel.table, out_csv, "Router selection: every candidate and the nested selection against the ladder",
                f"Bands of router.rankers x router.gates, examples models and the ladder, out of fold under danger <= "
                f"{study.gate.danger_budget}, ask rate <= {ask_cap(settings, study)} and declared p50_ms <= "
                f"{settings.latency_budget_ms}. Reasons: router.json's selection. "
                "docs/metrics.md, 'Router selection'. "
                + mode_note(exp.main), study.run.seed)


def selection_record(sel: Selection, settings, allow_regret: bool) -> dict:
    """router.json's ``selection``: the router that ships, why, the selection's nested accuracy against the ladder;
    where it loses and regret is not allowed, the ladder ships (``chosen``) and ``fallback`` says instead of what."""
    n = sel.nested
    numbers = (f"nested out-of-fold accuracy {n['accuracy']:.3f} against the ladder's {n['ladder_accuracy']:.3f} "
               f"(difference {n['accuracy_minus_ladder']:+.3f} [{n['ci_low']:+.3f}, {n['ci_high']:+.3f}])")
    regret, table = n["ci_high"] < 0, sel.table.set_index("candidate")
    fallback = regret and not allow_regret
    name = LADDER if fallback else sel.chosen.name
    # select: fixed has no ladder row: the ladder's accuracy out of fold on the same folds, as the guard measured it
    accuracy = table.loc[name, "accuracy"] if name in table.index else n["ladder_accuracy"]
    warning = (f"the selected router ({sel.chosen.name}) loses to the single-pool ladder: {numbers}; the ladder ships "
               f"instead (router.allow_regret or --allow-regret ships {sel.chosen.name})" if fallback
               else f"exported despite regret: {numbers}" if regret else None)
    return {"mode": settings.select, "chosen": name, "why": sel.why,
            "candidates": int(len(sel.table) - 1), "oof_accuracy": float(accuracy),
            "latency_budget_ms": settings.latency_budget_ms,
            "passed_over": sel.passed_over, "nested": n, "regret": bool(regret), "warning": warning,
            **({"fallback": {"instead_of": sel.chosen.name, "why": f"loses to the single-pool ladder: {numbers}"}}
               if fallback else {}),
            "table": "tables/router_selection.csv",
            "evaluation": "tables/router_eval.csv"}  # the card the router_eval rule writes of this router


def export_selected(exp, out_dir, table=None, force: bool = False, allow_regret: bool = False):
    """The selected router (the experiment's ``router`` settings) exported, or the ladder in its place (see the module
    docstring); ``table``: where to write tables/router_selection.csv of the same selection."""
    settings = exp.router
    sel = selection_of(exp)
    if table is not None:
        write_router_selection(sel, exp, table)
    if sel.chosen is None:
        raise InputError("router.select", sel.why)
    for line in sel.passed_over:  # on the terminal, not only in the log: the user chose the budgets
        CONSOLE.warning("router.select %s", line)
    record = selection_record(sel, settings, allow_regret or settings.allow_regret)
    if "fallback" in record:
        CONSOLE.warning("router.select %s", record["warning"])
    ranker, gate = (exp.provenance["lexical"], None) if "fallback" in record else (sel.chosen.ranker, sel.chosen.gate)
    route = Route(SELECTED, ranker, gate, "utility")
    return export_router(exp, route, out_dir, force, record)


def export_experiment(cfg: dict, config_path, pipeline: str | None, out_dir=None, force: bool = False,
                      allow_regret: bool = False):
    """(folder, manifest, how written): ``toolgate export`` of a resolved config whose workflow has run.

    ``pipeline``: a name under routing.pipelines or ``ladder``, or None: the router router.select chooses (folder
    ``selected``);
    ``out_dir``: default ``results/<experiment>/router/<pipeline or selected>``.
    """
    if pipeline is not None and pipeline not in [*cfg["routing"]["pipelines"], LADDER]:
        known = ", ".join([*cfg["routing"]["pipelines"], LADDER])
        raise InputError(config_path, f"unknown pipeline '{pipeline}' (known: {known})", field="routing.pipelines")
    exp = Experiment.from_config(cfg, config_path)
    out = Path(out_dir or Layout(cfg["experiment"]).router(pipeline or SELECTED))
    if pipeline is None:
        m, written = export_selected(exp, out, None, force, allow_regret)
    else:
        m, written = export_router(exp, pipeline_route(pipeline, exp), out, force)
    return out, m, written
