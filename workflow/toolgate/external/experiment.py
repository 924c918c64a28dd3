"""Catalogs for the main pipeline built from external sets: route entries, the tool split, and the experiments of
the data stage: FunctionChat CallDecision (``utterances.source: functionchat``) and CLINC150 (``clinc150``).

``toolgate import`` (:mod:`toolgate.importers`) builds any imported set with the same route entries and tool split.
"""
from __future__ import annotations

import logging
import random

from ..core import io
from ..utterances import check_utterances
from .adapters import clinc150_set, clinc150_splits, functionchat_calldecision
from .sources import locate

log = logging.getLogger(__name__)


ROUTES = [  # the route entries of the 73-way pool, for catalogs built from external sets
    ("chat", {"ko": "대화", "en": "Chat"},
     {"ko": "실행할 기능 없이 대화로 답합니다.", "en": "Reply conversationally without running an action."}),
    ("delegate", {"ko": "서버에 위임", "en": "Delegate to server"},
     {"ko": "기기에서 처리할 수 없는 요청을 서버로 넘깁니다.", "en": "Hand a request the device cannot serve to the server."}),
    ("clarify", {"ko": "되묻기", "en": "Clarify"},
     {"ko": "필요한 정보가 빠졌을 때 사용자에게 되묻습니다.", "en": "Ask the user for missing information."}),
]


def route_rows(lang: str) -> list[dict]:
    return [{"id": rid, "kind": "route", "group": "route", "domain": "route", "mutating": False,
             "names": {lang: names[lang]}, "descriptions": {lang: descs[lang]},
             "parameters": {"type": "object", "properties": {}, "required": []}, "keywords": {}}
            for rid, names, descs in ROUTES]


def holdout_tools(golds, fraction: float, seed: int) -> set[str]:
    """The tool split: ``int(fraction * n)`` of the ``n`` distinct gold tools, drawn by ``seed`` (sorted, then
    shuffled), to remove from a catalog so that their requests become out-of-catalog items."""
    golds = sorted(set(golds))
    random.Random(seed).shuffle(golds)
    return set(golds[: int(len(golds) * fraction)])


def functionchat_experiment(seed: int, mirror=None) -> tuple[list[dict], list[dict], dict]:
    """FunctionChat-Bench CallDecision as a main-pipeline experiment: (catalog, utterances, info).

    A CALL request and its REJECT twin cannot both be asked of one catalog, so
    the distinct gold tools are split in two halves by ``seed``: a request whose
    gold tool falls in the removed half contributes its REJECT row (out of
    catalog, gold delegate), every other request its CALL row (in catalog).
    The catalog holds every distinct candidate tool of the kept rows minus the
    removed tools, so the REJECT requests really have no tool. There are no
    translations (each request is its own pair) and no match/mismatch split
    (``slice: in``). Route entries are added.
    """
    folder = locate("functionchat", mirror, files=["FunctionChat-CallDecision.jsonl"])
    cd = functionchat_calldecision(folder)
    gold_of = {c: u["gold_tool"] for u, c in zip(cd.utterances, cd.clusters) if u["gold_tool"]}
    removed = holdout_tools(gold_of.values(), 0.5, seed)
    out_clusters = {c for c, g in gold_of.items() if g in removed}
    keep = [i for i, (u, c) in enumerate(zip(cd.utterances, cd.clusters))
            if (u["subtype"] == "reject") == (c in out_clusters)]
    used = {t for i in keep for t in cd.candidates[i]} - removed
    catalog = [t for t in cd.catalog if t["id"] in used] + route_rows("ko")
    utts = []
    for i in keep:
        u = dict(cd.utterances[i])
        u["pair_id"] = u["utterance_id"]
        if u["gold_tool"]:
            u["slice"] = "in"
        utts.append(u)
    info = {"requests": len(gold_of), "call_rows": sum(u["gold_tool"] is not None for u in utts),
            "reject_rows": sum(u["gold_tool"] is None for u in utts), "removed_tools": len(removed),
            "actions": len(catalog) - len(ROUTES), "seed": seed}
    return catalog, utts, info


def clinc150_experiment(seed: int, mirror=None) -> tuple[list[dict], list[dict], dict]:
    """CLINC150 as a main-pipeline experiment: (catalog, utterances, info). Its intents with their training requests
    as examples (:func:`~.adapters.clinc150_set`), the validation and test requests (each its own pair, ``slice:
    in`` in catalog), route entries added. ``seed``: unused (nothing is drawn), taken as every source's builder
    takes it."""
    ext = clinc150_set(clinc150_splits(locate("clinc150", mirror) / "data_full.json"))
    utts = [{**u, "slice": "in"} if u["gold_tool"] else u for u in ext.utterances]
    info = {"in_catalog": sum(u["gold_tool"] is not None for u in utts),
            "out_of_catalog": sum(u["gold_tool"] is None for u in utts), "actions": len(ext.catalog),
            "examples": sum(len(t["examples"]) for t in ext.catalog)}
    return ext.catalog + route_rows("en"), utts, info


SOURCES = {"functionchat": (functionchat_experiment, ("ko",)), "clinc150": (clinc150_experiment, ("en",))}


def write_source_experiment(exp, source: str) -> None:
    """The experiment's catalog, utterances (checked as any utterance file) and a summary beside them (outputs
    ``catalog``, ``utterances``, ``meta``) from the external set ``source`` (a key of :data:`SOURCES`); ``exp``:
    the rule's :class:`toolgate.experiment.Experiment` (see :func:`.study.write_external`)."""
    out, (build, langs) = exp.output, SOURCES[source]
    catalog, utts, info = build(exp.seed, exp.external.mirror)
    check_utterances(enumerate(utts, start=1), catalog, out.utterances, langs)
    io.write_atomic(out.catalog, io.dumps_jsonl(catalog))
    io.write_atomic(out.utterances, io.dumps_jsonl(utts))
    io.write_json(out.meta, info)
    log.info("%s experiment: %s", source, info)
