"""From an imported set to an experiment folder: options, then catalog.jsonl, utterances.jsonl, config.yaml.

Requests the router would refuse are dropped first, and counted; then the options apply in a fixed order (subsets,
duplicates, ``--per-tool``, the sample, ``--holdout-tools``, candidates, route entries). Everything is validated
as any input in a temporary folder before it moves into ``DIR`` (:mod:`toolgate.outdir`).
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import yaml

from ..config import check_inputs, resolve
from ..core import io, schemas
from ..core.artifact import file_entry
from ..core.catalog import actions
from ..core.errors import InputError
from ..data.card import language_gaps, language_table
from ..external.adapters import ExternalSet
from ..external.experiment import ROUTES, holdout_tools, route_rows
from ..outdir import write_folder
from ..utterances import load_inputs
from .policy import Decisions

FILES = ("catalog.jsonl", "utterances.jsonl", "config.yaml", "import.json")
LICENCE_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING")  # beside a source's files: the licence it states
HEADER = """# Written by `toolgate import` ({command}); import.json beside this file records the counts.
# Run from the project root: snakemake --configfile {config} --cores 2 (the paths below are relative to this file).
# Every key left out takes its default from workflow/toolgate/core/schemas/config.schema.yaml: the main study
# only (the external cross-checks, quantization and native tool calling are off).
"""
PROJECT = Path(__file__).resolve().parents[3]  # the workflow's root when toolgate runs from a checkout
DUPLICATES = ("keep", "drop")
SEED = schemas.schema("config")["properties"]["seed"]["default"]
NO_TOOLS = ("offered no tools (--empty-candidates delegate): utterances.jsonl cannot show a request that sees no "
            "tool (decide --eval --eval-format routes it so)")
JSON_TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")
MAX_CHARS = schemas.schema("config")["properties"]["router"]["properties"]["max_chars"]["default"]
TOO_LONG = "the text is longer than the router's limit of {} characters (router.max_chars; first: {})"
REFUSED = "the text holds a control character the router refuses (C0/C1 other than tab, newline, CR; first: {})"


@dataclass(frozen=True)
class Options:
    """``toolgate import`` options (see ``toolgate import --help``)."""
    sample: int = 0              # at most this many requests, drawn uniformly with seed (0: all)
    per_tool: int = 0            # before the sample: at most this many requests per gold tool (0: all)
    seed: int = SEED             # the experiments' default seed (config schema)
    holdout: float = 0.0         # share of the gold tools removed from the catalog
    subsets: tuple = ()          # keep only these subsets / conditions of the source
    candidates: bool = True      # keep each request's own candidate list (False: one pooled catalog)
    routes: bool = True          # add the route entries chat, delegate, clarify
    duplicates: str = "keep"     # a request repeating an earlier one (text, earlier turns, candidates): keep / drop
    empty_candidates: str = ""   # what an empty candidate list means: catalog / delegate ("": an error)
    other_langs: str = "skip"    # a row whose script is neither Hangul nor Latin: skip / keep (as en) / error
    fields: object = None        # tool-rows: where each part of a request is (toolrows.Fields)
    examples: int = 0            # at most this many requests per tool move into the catalog as its examples


def _choose(ext: ExternalSet, opt: Options, notes: Decisions) -> ExternalSet:
    """The chosen subsets, then repeated requests kept or dropped (counted in ``notes``), then at most
    ``per_tool`` requests per gold tool, then the sample."""
    if opt.subsets:
        unknown = sorted(set(opt.subsets) - set(ext.conditions))
        if unknown:
            raise InputError("--subsets", f"unknown subset '{unknown[0]}' (this source has: "
                                          f"{', '.join(dict.fromkeys(ext.conditions))})")
        ext = ext.subset(np.isin(ext.conditions, opt.subsets))
    first, keep = {}, []
    for u, own in zip(ext.utterances, ext.candidates):
        key = json.dumps([u["text"], u.get("context", []), sorted(own)], sort_keys=True, ensure_ascii=False)
        earlier = first.setdefault(key, u)
        keep.append(earlier is u or opt.duplicates == "keep")
        if earlier is not u:
            notes.count("repeated requests (text, earlier turns and candidates of an earlier row) "
                        + ("dropped" if opt.duplicates == "drop" else "kept (--duplicates drop drops them)"))
            notes.count("repeated requests with another gold outcome or tool than the earlier row",
                        (u["gold_outcome"], u["gold_tool"]) != (earlier["gold_outcome"], earlier["gold_tool"]))
    ext = ext.subset(keep)
    if opt.per_tool:  # balanced per tool: a random K of each gold tool's requests; out-of-catalog ones uncapped
        order = np.random.default_rng(opt.seed).permutation(len(ext.utterances))
        seen, keep = Counter(), np.ones(len(order), bool)
        for i in order:
            tool = ext.utterances[i]["gold_tool"]
            seen[tool] += tool is not None
            keep[i] = seen[tool] <= opt.per_tool
        notes.count(f"requests over --per-tool {opt.per_tool} left out", int((~keep).sum()))
        ext = ext.subset(keep)
    n = len(ext.utterances)
    if 0 < opt.sample < n:
        keep = np.zeros(n, bool)
        keep[np.random.default_rng(opt.seed).choice(n, opt.sample, replace=False)] = True
        ext = ext.subset(keep)
    return ext


def _refused(ext: ExternalSet, max_chars: int | None) -> tuple[list[bool], Counter]:
    """(kept, dropped): the requests the router would refuse (a control character; over ``max_chars``, unless
    None) left out, each reason counted with its first request."""
    kept, dropped = [True] * len(ext.utterances), Counter()
    tests = [(REFUSED, lambda t: io.control_character(t) is not None)]
    if max_chars is not None:
        tests.append((TOO_LONG.format(max_chars, "{}"), lambda t: len(t) > max_chars))
    for why, refuses in tests:
        hits = [k and refuses(u["text"]) for k, u in zip(kept, ext.utterances)]
        if any(hits):
            dropped[why.format(ext.utterances[hits.index(True)]["utterance_id"])] = sum(hits)
            kept = [k and not h for k, h in zip(kept, hits)]
    return kept, dropped


def prepare(ext: ExternalSet, opt: Options, notes: Decisions | None = None, removed: set | None = None,
            max_chars: int | None = None) -> tuple[list[dict], list[dict], dict]:
    """(catalog, utterances, info) of an imported set under ``opt``; ``notes``: what reading it decided;
    ``removed``: the tools to split off (default: ``opt.holdout``'s draw; given: ``decide --eval``, where a request
    offered no tools keeps its empty list and the router sees it so, while utterances.jsonl, whose candidate lists
    are never empty, leaves it out, counted); ``max_chars``: requests longer are dropped, counted (None: kept, for
    the router to refuse)."""
    notes = notes or Decisions(None)
    kept, dropped = _refused(ext, max_chars)
    ext = _choose(ext.subset(kept), opt, notes)
    empty_lists = removed is not None
    if removed is None:
        removed = holdout_tools([u["gold_tool"] for u in ext.utterances if u["gold_tool"]], opt.holdout, opt.seed)
    lists = all(ext.candidates)  # every request has its own list: the catalog is the union of the kept lists
    rows, used, pair_of = [], set(), {}
    for u, own, cluster in zip(ext.utterances, ext.candidates, ext.clusters):
        u, cands = dict(u), [c for c in own if c not in removed]
        if u["gold_tool"] in removed:
            u.update(gold_outcome="delegate", gold_tool=None, slice="out", subtype=f"holdout:{u['subtype']}",
                     missing_slots=[])
        elif u["gold_tool"] is not None:
            u["slice"] = "in"
        elif own and not opt.candidates:
            dropped["out of catalog only within its own list (pooled)"] += 1
            continue
        if own and not cands:
            dropped["no candidate left after the tool split"] += 1
            continue
        sees_none = u["utterance_id"] in notes.sees_none
        if sees_none and not empty_lists:
            dropped[NO_TOOLS] += 1
            continue
        u["pair_id"] = pair_of.setdefault(cluster, u["utterance_id"])
        if (opt.candidates and cands) or sees_none:
            u["candidates"] = cands
        used.update(cands)
        rows.append(u)
    keep = used | {u["gold_tool"] for u in rows if u["gold_tool"]} if lists else {t["id"] for t in ext.catalog}
    keep -= removed
    catalog = [t for t in ext.catalog if t["id"] in keep]
    if opt.examples:
        catalog, rows = held_as_examples(catalog, rows, opt.examples, opt.seed)
    clash = sorted({t["id"] for t in catalog} & {r[0] for r in ROUTES})
    if opt.routes and clash:
        raise InputError(ext.dataset, f"tool id '{clash[0]}' is also a route entry; import with --no-routes")
    if not rows:  # why: what left rows out (dropped here, or skipped while reading), not how columns were chosen
        why = "; ".join(f"{reason}: {n}" for reason, n in (*dropped.items(), *notes.counts.items())
                        if n and (reason in dropped or "left out" in reason)) or "the source holds none"
        raise InputError(ext.dataset, f"no request left ({why})")
    langs = Counter(u["lang"] for u in rows)
    langs = {lang: langs[lang] for lang in io.LANGS if lang in langs or any(lang in t["names"] for t in catalog)}
    info = {"format": ext.dataset, "langs": langs, "options": asdict(opt), "actions": len(catalog),
            "examples": sum(len(t.get("examples", [])) for t in catalog),
            "removed_tools": len(removed), "requests": len(rows),
            "in_catalog": sum(u["gold_tool"] is not None for u in rows),
            "out_of_catalog": sum(u["gold_tool"] is None for u in rows),
            "with_candidates": sum("candidates" in u for u in rows), "dropped": dict(dropped),
            "unknown_types": unknown_types(catalog),
            "language_warnings": language_gaps(language_table(catalog, rows)), **notes.info(ext.names)}
    return catalog + (_routes(list(langs)) if opt.routes else []), rows, info


def held_as_examples(catalog: list[dict], rows: list[dict], n: int, seed: int) -> tuple[list[dict], list[dict]]:
    """(catalog, rows): up to ``n`` requests per tool (gold outcome action) moved from ``rows`` into the tool's
    ``examples``, drawn with ``seed`` a cluster at a time (a request and its translations go together, so no
    evaluation request is another's copy), never a tool's last cluster."""
    clusters: dict[str, dict[str, list[dict]]] = {}
    for u in rows:
        if u["gold_outcome"] == "action":
            clusters.setdefault(u["gold_tool"], {}).setdefault(u["pair_id"], []).append(u)
    rng, taken, moved = np.random.default_rng(seed), {}, set()
    for tool in sorted(clusters):
        pairs = sorted(clusters[tool])
        for k in rng.permutation(len(pairs))[:len(pairs) - 1]:
            if len(taken.get(tool, [])) >= n:
                break
            group = clusters[tool][pairs[k]][:n - len(taken.get(tool, []))]
            taken.setdefault(tool, []).extend({"text": u["text"], "lang": u["lang"]} for u in group)
            moved |= {u["pair_id"] for u in clusters[tool][pairs[k]]}
    catalog = [{**t, "examples": t.get("examples", []) + taken[t["id"]]} if t["id"] in taken else t for t in catalog]
    return catalog, [u for u in rows if u["pair_id"] not in moved]


def unknown_types(catalog: list[dict]) -> dict[str, int]:
    """Parameter types outside JSON Schema's (BFCL's ``dict``, ``float``, a set's ``str``) -> how many parameters
    of the catalog's tools have each: kept as given, nothing reads them, but a schema consumer would refuse them."""
    types = Counter(p.get("type") for t in catalog for p in t["parameters"]["properties"].values())
    return {k: n for k, n in sorted(types.items(), key=str) if k not in JSON_TYPES}


def _definition(tool: dict) -> str:
    """What makes two catalog rows one tool: names, descriptions and parameters (ids depend on import order)."""
    return json.dumps([tool["names"], tool["descriptions"], tool["parameters"]], sort_keys=True, ensure_ascii=False)


def requests_over(ext: ExternalSet, catalog: list[dict], opt: Options,
                  notes: Decisions | None = None) -> tuple[list[dict], dict]:
    """(utterances, info) of an imported set's requests over another ``catalog`` (an exported router's), prepared
    as ``import`` prepares them: each tool of the set is the catalog action of the same definition; a tool the
    catalog lacks is split off as ``--holdout-tools`` splits (its requests out of catalog, its candidate entries
    gone; info's ``removed_tools`` counts them, ``tools_matched`` gives [matched, all]); no tool matched is an
    error."""
    own = {_definition(t): t["id"] for t in actions(catalog)}
    ids = {t["id"]: own.get(_definition(t)) for t in ext.catalog}
    matched = sum(to is not None for to in ids.values())
    if ids and not matched:  # the wrong tools file, or another catalog: scoring it would only measure delegation
        raise InputError("--eval", f"none of the files' {len(ids)} tools is in the router's catalog (no action of "
                                   "the same definition): are these the tools the router was exported with?")
    _, rows, info = prepare(ext, opt, notes, {tid for tid, to in ids.items() if to is None})
    info["tools_matched"] = [matched, len(ids)]
    for u in rows:
        u["gold_tool"] = ids[u["gold_tool"]] if u["gold_tool"] else None
        if "candidates" in u:
            u["candidates"] = [ids[c] for c in u["candidates"]]
    return rows, info


def _routes(langs: list[str]) -> list[dict]:
    """The route entries, named and described in every language of the set."""
    rows = route_rows(langs[0])
    for lang in langs[1:]:
        for row, other in zip(rows, route_rows(lang)):
            row["names"].update(other["names"])
            row["descriptions"].update(other["descriptions"])
    return rows


def gate_folds(rows: list[dict]) -> int:
    """The gate study's folds for this set: the schema's default, fewer when a side has fewer request groups."""
    default = schemas.schema("config")["properties"]["gate"]["properties"]["folds"]["default"]
    groups = {side: len({u["pair_id"] for u in rows if (u["gold_tool"] is not None) == side}) for side in (True, False)}
    if min(groups.values()) < 2:
        raise InputError("import", f"{groups[True]} in-catalog and {groups[False]} out-of-catalog request groups: the "
                                   "gate study needs at least 2 of each (--holdout-tools FRACTION turns the requests "
                                   "of removed tools into out-of-catalog items)")
    return min(default, *groups.values())


def experiment_config(out: Path, langs: list[str], folds: int) -> dict:
    """A config of the main study on the imported files, which it names relative to itself; experiment name from
    the folder's name."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", out.resolve().name).strip("._") or "imported"
    cfg = {"experiment": name, "relative_to": "config", "langs": langs, "catalog": "catalog.jsonl",
           "utterances": {"source": "file", "file": "utterances.jsonl"},
           "ablation": {"ks": "auto"}, "report": {"expected": ""}}
    if folds != schemas.schema("config")["properties"]["gate"]["properties"]["folds"]["default"]:
        cfg["gate"] = {"folds": folds}
    return cfg


def run_path(out: Path) -> str:
    """``DIR/config.yaml`` as the project root sees it: the current folder when it holds a Snakefile (a checkout
    the command runs in), else the checkout toolgate runs from; else as given."""
    config = out / "config.yaml"
    root = next((r for r in (Path.cwd(), PROJECT) if (r / "Snakefile").is_file()), None)
    return os.path.relpath(config.absolute(), root) if root else config.as_posix()


def licence_name(path: Path) -> str:
    """A licence file's SPDX identifier (its ``SPDX-License-Identifier`` line; Apache-2.0, CC0 and the Creative Commons
    licences of version 3.0 and 4.0 by their titles), else its title: its first line, the second under "Creative
    Commons Legal Code" (a ported licence's)."""
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        lines = [line.strip().lstrip("#").strip() for line in fh.read(4096).splitlines() if line.strip()]
    tag = "SPDX-License-Identifier:"
    spdx = next((line.split(tag, 1)[1].strip() for line in lines if tag in line), "")
    apache = lines[:2] == ["Apache License", "Version 2.0, January 2004"]
    # the title: line 1 under "Creative Commons Legal Code" (3.0: "Attribution 3.0 Unported", "CC0 1.0 Universal")
    title = lines[1] if lines[:1] == ["Creative Commons Legal Code"] and len(lines) > 1 else lines[0] if lines else ""
    if not spdx and (cc := _CC.fullmatch(title)):
        spdx = "CC-" + "-".join(_CC_PARTS[w] for w in re.split(r"[- ]", cc[1])) + f"-{cc[2]}"
    elif not spdx and title == "CC0 1.0 Universal":
        spdx = "CC0-1.0"
    return spdx or ("Apache-2.0" if apache else title[:200] if lines else "(an empty file)")


_CC = re.compile(r"(?:Creative Commons )?(Attribution(?:-NonCommercial)?(?:-NoDerivs|-NoDerivatives|-ShareAlike)?) "
                 r"(\d\.\d)(?: (?:Unported|International)(?: Public License)?)?")
_CC_PARTS = {"Attribution": "BY", "NonCommercial": "NC", "NoDerivs": "ND", "NoDerivatives": "ND", "ShareAlike": "SA"}


def source_licences(sources) -> list[dict]:
    """The licences the sources state: a LICENSE file beside each source file, or inside a source folder."""
    found = {}
    for source in map(Path, sources):
        folder = source if source.is_dir() else source.parent
        path = next((folder / n for n in LICENCE_FILES if (folder / n).is_file()), None)
        if path is not None and path not in found:
            found[path] = licence_name(path)
    return [{"name": name, "file": str(path)} for path, name in found.items()]


@dataclass(frozen=True)
class Destination:
    """Where an import writes: the folder, the command recorded in its config.yaml and import.json, whether an
    earlier import there may be replaced (``--force``), and the licence the user declares for the data
    (``--license``: import.json's ``licenses``, beside those the sources state)."""
    folder: str | Path
    command: str = ""
    force: bool = False
    license: str = ""


def write_import(ext: ExternalSet, opt: Options, dest: Destination, notes: Decisions | None = None,
                 sources=()) -> dict:
    """Write ``dest.folder``/{catalog.jsonl, utterances.jsonl, config.yaml, import.json}, validated; return
    import.json's info with ``written``: how the folder was written. The folder must be new or empty, or hold an
    earlier import (replaced with ``dest.force``; :mod:`toolgate.outdir`). ``notes``: what reading the set decided;
    ``sources``: the files or folders read (import.json's ``licenses``: what a LICENSE beside them states, then the
    licence ``dest.license`` declares).
    """
    out, command, info = Path(dest.folder), dest.command, {}
    declared = [{"name": dest.license.strip(), "declared": "--license"}] if dest.license.strip() else []

    def write(tmp: Path) -> None:
        catalog, rows, prepared = prepare(ext, opt, notes, max_chars=MAX_CHARS)
        cfg = experiment_config(out, list(prepared["langs"]), gate_folds(rows))
        info.update(prepared, command=command, experiment=cfg["experiment"],
                    gate_folds=cfg.get("gate", {}).get("folds"), run=run_path(out),
                    licenses=source_licences(sources) + declared)
        io.write_atomic(tmp / "catalog.jsonl", io.dumps_jsonl(catalog))
        io.write_atomic(tmp / "utterances.jsonl", io.dumps_jsonl(rows))
        io.write_atomic(tmp / "config.yaml", HEADER.format(command=command, config=info["run"])
                        + yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
        info["files"] = {n: file_entry((tmp / n).read_bytes()) for n in FILES[:-1]}  # what --force may replace
        io.write_atomic(tmp / "import.json", json.dumps(info, ensure_ascii=False, indent=2) + "\n")
        _validate(tmp, out, cfg)

    info["written"] = write_folder(out, FILES, write, dest.force)
    return info


def _validate(tmp: Path, out: Path, cfg: dict) -> None:
    """The written files checked as the workflow will check them; an error names the file by its name and says
    that nothing reached ``out``."""
    staged = {**cfg, "catalog": str(tmp / "catalog.jsonl"),
              "utterances": {**cfg["utterances"], "file": str(tmp / "utterances.jsonl")}}
    try:
        load_inputs(staged["catalog"], staged["utterances"]["file"], tuple(cfg["langs"]))
        check_inputs(resolve(staged, str(out / "config.yaml")), str(out / "config.yaml"))
    except InputError as exc:
        raise InputError(Path(exc.path).name, f"{exc.message} (in the files the import would write; nothing was "
                                              f"written to {out})", exc.line, exc.field) from None
