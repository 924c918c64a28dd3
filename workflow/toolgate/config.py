"""Experiment config: validation against the JSON schema, with defaults filled in."""
from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import os
from dataclasses import dataclass, fields
from pathlib import Path

from jsonschema.exceptions import best_match

from .core import io, schemas
from .core.catalog import actions, load_catalog
from .core.errors import InputError, Problems, field_path
from .core.rankers import RankerSpec, hybrid_rankers, kinds
from .utterances import OUT_SUBTYPES, is_in_catalog, load_utterances, main_set


def resolve(config: dict, source: str = "config") -> dict:
    """A validated copy of ``config`` with every default filled in.

    Raises InputError naming the offending key, e.g.
    ``config: field 'text.ngram': 0 is less than the minimum of 1``.
    """
    _check_finite(config, source)
    schema = schemas.schema("config")
    by_field: dict[tuple, list] = {}  # every field's problem at once: the best-matching error of each field
    for err in schemas.validator(schema).iter_errors(config):
        by_field.setdefault(tuple(map(str, err.absolute_path)), []).append(err)
    problems = Problems()
    for errs in by_field.values():
        with problems.each():
            field, message = schemas.schema_error(best_match(errs))
            raise InputError(source, message, field=field)
    problems.done()
    out = copy.deepcopy(config)
    schemas.fill_defaults(out, schema)
    _check_hybrids(out, source)
    _check_lexical(out, source)
    _check_packages(out, source)
    _check_path_kinds(out, source)
    chars = out["router"]["examples_chars"]
    if chars is not None and chars[0] > chars[1]:
        raise InputError(source, f"the shortest n-gram ({chars[0]}) is longer than the longest ({chars[1]})",
                         field="router.examples_chars")
    return out


def _check_finite(node, source: str, at: tuple = ()) -> None:
    """Every number is finite: NaN passes any schema bound (each comparison with it is false), YAML's .inf too."""
    if isinstance(node, float) and not math.isfinite(node):
        raise InputError(source, f"{node} is not a finite number", field=field_path(at) or None)
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        _check_finite(value, source, (*at, key))


def _check_lexical(cfg: dict, source: str) -> None:
    """The lexical role names a BM25 ranker of this config: its scores give the gate's features, its index is
    timed and shipped in every router."""
    name, rankers = cfg["roles"]["lexical"], cfg["rankers"]
    lexical = " or ".join(kinds("lexical"))
    if name not in rankers:
        raise InputError(source, f"'{name}' is not a ranker under rankers (rankers: {', '.join(rankers)}); the "
                                 f"lexical role names one of type {lexical}", field="roles.lexical")
    if not RankerSpec.of(rankers[name]).lexical:
        raise InputError(source, f"'{name}' is a {rankers[name]['type']} ranker; the lexical role needs one of type "
                                 f"{lexical}", field="roles.lexical")


def _check_packages(cfg: dict, source: str) -> None:
    """A ``pypi:`` model names a package toolgate supports (:data:`toolgate.core.schemas.PYPI_ENCODERS`, ``PYPI_GGUF``)."""
    models = [(f"rankers.{n}.encoder.model", e["encoder"]["model"], schemas.PYPI_ENCODERS)
              for n, e in cfg["rankers"].items() if "encoder" in e]
    models += [("quantization.onnx_model", cfg["quantization"]["onnx_model"], schemas.PYPI_ENCODERS)]
    models += [(f"native.roster.{n}.model", e["model"], schemas.PYPI_GGUF) for n, e in cfg["native"]["roster"].items()]
    for field, model, known in models:
        if model.startswith("pypi:") and model[5:] not in known:
            raise InputError(source, f"'{model}' is not a model package toolgate supports (pypi: names one of "
                                     f"{', '.join(known)})", field=field)


def _check_path_kinds(cfg: dict, source: str) -> None:
    """A path the config sets that exists is of its kind (:data:`PATH_KINDS`): a catalog naming a folder stops here,
    not inside a job. One not there yet may be built by a rule (the rules that read it check it)."""
    paths = [(key, functools.reduce(dict.get, key.split("."), cfg), kind) for key, kind in PATH_KINDS.items()]
    paths += [(field_path(("report", "compare", i)), p, "file") for i, p in enumerate(cfg["report"]["compare"])]
    for field, path, kind in paths:
        if path and Path(path).exists() and Path(path).is_dir() != (kind == "folder"):
            raise InputError(source, f"'{path}' is a {'file' if kind == 'folder' else 'folder'}; {field} names a "
                                     f"{kind}", field=field)


def _check_hybrids(cfg: dict, source: str) -> None:
    """A hybrid's members are rankers of this config that are not hybrids; convex fuses exactly two. A hybrid
    ranks actions only, from score matrices: it cannot be the lexical ranker or a pipeline's (exported) ranker."""
    rankers = cfg["rankers"]
    hybrid = hybrid_rankers(rankers)
    uses = {"roles.lexical": cfg["roles"]["lexical"],
            **{f"routing.pipelines.{p}.ranker": v["ranker"] for p, v in cfg["routing"]["pipelines"].items()}}
    for field, name in uses.items():
        if name in hybrid:
            raise InputError(source, f"'{name}' is a hybrid ranker, which cannot play this part", field=field)
    for name, members in hybrid.items():
        spec = rankers[name]
        for m in members:
            if m not in rankers or m in hybrid:
                what = "is not a ranker of this config" if m not in rankers else "is a hybrid itself"
                raise InputError(source, f"member '{m}' {what}", field=f"rankers.{name}.members")
        if spec["method"] == "convex" and len(spec["members"]) != 2:
            raise InputError(source, f"convex fuses exactly two members, got {len(spec['members'])}",
                             field=f"rankers.{name}.members")


def fit_ks(ks, n_actions: int, source: str = "config") -> list[int]:
    """``ablation.ks`` for a catalog of ``n_actions`` actions.

    ``auto`` is a geometric ladder, 5, 10, 20, 40, ... below the action count,
    then the action count (the full catalog). A listed k above the action count
    raises InputError naming ``ablation.ks``.
    """
    if ks == "auto":
        ladder = [5 * 2**i for i in range(max(n_actions, 1).bit_length()) if 5 * 2**i < n_actions]
        return ladder + [max(n_actions, 2)]
    above = [k for k in ks if k > n_actions]
    if above:
        raise InputError(source, f"k={above[0]} is above the catalog's {n_actions} actions (use 'auto' or ks up to "
                                 f"{n_actions})", field="ablation.ks")
    return list(ks)


def check_inputs(cfg: dict, source: str = "config") -> None:
    """Checks of a resolved config against its inputs, where they are known before any job.

    Called when the workflow starts, so a config that does not fit its inputs stops before any job:
    ``tournament.checkpoint`` against ``native.roster``; ``utterances.templates`` holds template banks (a
    generated set); ``ablation.ks`` against the action count; ``gate.folds`` and each convex hybrid's ``folds``
    against the in- and out-of-catalog request groups (pairs), counted in ``utterances.composition`` for a
    generated set and in a prepared utterance file. Inputs built by a rule are checked by the rules that read them.
    """
    tour = cfg["tournament"]
    if tour["enabled"] and tour["checkpoint"] not in cfg["native"]["roster"]:
        raise InputError(source, f"'{tour['checkpoint']}' is not in native.roster (known: "
                                 f"{', '.join(cfg['native']['roster'])})", field="tournament.checkpoint")
    utt = cfg["utterances"]
    _check_held_out(cfg, source)
    if utt["source"] == "generate":
        if not any(Path(utt["templates"]).glob("*.yaml")):
            raise InputError(source, f"no template bank files (*.yaml) in '{utt['templates']}'",
                             field="utterances.templates")
        comp = utt["composition"]
        _check_folds(cfg, comp["in_catalog_pairs"], sum(comp[f"{s}_pairs"] for s in OUT_SUBTYPES),
                     "utterances.composition", source)
    if not Path(cfg["catalog"]).is_file():
        return
    catalog = load_catalog(cfg["catalog"], tuple(cfg["langs"]))
    fit_ks(cfg["ablation"]["ks"], len(actions(catalog)), source)
    path = utt["file"]
    if utt["source"] != "file" or not Path(path).is_file():
        return
    rows = main_set(load_utterances(path, catalog, tuple(cfg["langs"])))
    pairs = {side: {r["pair_id"] for r in rows if is_in_catalog(r["gold_outcome"]) == side} for side in (True, False)}
    _check_folds(cfg, len(pairs[True]), len(pairs[False]), path, source)


# Each set of external.sets and the names it takes in the gate tables (external_gate, gate_transfer, gate_loco):
# CallDecision is FunctionChat's set with both kinds of request, BFCL adds its rows with two or more candidates.
GATE_SETS = {"functionchat_singlecall": (), "functionchat_calldecision": ("functionchat",),
             "bfcl": ("bfcl", "bfcl_2plus")}


def _check_held_out(cfg: dict, source: str) -> None:
    """An external set is held out only from another catalog: not one built from the experiment's own data
    (``utterances.source: functionchat``), nor one named as the experiment (its rows would replace the own set's)."""
    ext = cfg["external"]
    if not ext["enabled"]:
        return
    own = [s for s in ext["sets"] if s.startswith("functionchat_")] if cfg["utterances"]["source"] == "functionchat" else []
    if own:
        raise InputError(source, f"{own[0]} is this experiment's own data (utterances.source: functionchat), so not a "
                                 "held-out catalog; list the other sets (config/functionchat.yaml: [bfcl])",
                         field="external.sets")
    clash = [s for s in ext["sets"] if cfg["experiment"] in GATE_SETS[s]]
    if clash:
        raise InputError(source, f"the experiment is named '{cfg['experiment']}', as the held-out set {clash[0]} is in "
                                 "the transfer tables; rename the experiment or leave the set out", field="external.sets")


def _check_folds(cfg: dict, n_in: int, n_out: int, where: str, source: str) -> None:
    """Folds grouped by pair need at least one group per fold on each side (sklearn fails after scoring otherwise)."""
    folds = {"gate.folds": cfg["gate"]["folds"],
             **{f"rankers.{n}.folds": cfg["rankers"][n]["folds"] for n in hybrid_rankers(cfg["rankers"])
                if cfg["rankers"][n]["method"] == "convex"}}
    for label, groups in (("in-catalog", n_in), ("out-of-catalog", n_out)):
        for field, n in folds.items():
            if groups < n:
                raise InputError(source, f"{n} folds need at least as many {label} request groups (pair_id); "
                                         f"{where} has {groups}", field=field)


def utterances_path(cfg: dict) -> str:
    """A resolved config's utterances: the file it names, or the set its workflow generates (the rules' input and
    ``toolgate export``'s)."""
    if cfg["utterances"]["source"] == "file":
        return cfg["utterances"]["file"]
    return f"results/{cfg['experiment']}/data/utterances.jsonl"


# The paths a config sets (besides report.compare's files), and whether each names a file or a folder.
PATH_KINDS = {"catalog": "file", "utterances.file": "file", "utterances.templates": "folder",
              "utterances.annotations": "folder", "report.reported": "file", "report.expected": "file",
              "external.mirror": "folder", "router.latency_table": "file", "router.probes": "folder",
              "router.blind": "folder"}


def rebase(config: dict, files) -> dict:
    """``config`` as read from the config ``files``: with ``relative_to: config``, every relative path it sets
    (:data:`PATH_KINDS` and ``report.compare``) is taken from the folder of its one file and rewritten relative to
    the working directory; otherwise ``config`` unchanged. Paths left to the schema's defaults are not moved."""
    if not isinstance(config, dict) or config.get("relative_to") != "config":
        return config
    if len(files) != 1:
        raise InputError("config", f"relative_to: config needs exactly one config file, got {len(files)}",
                         field="relative_to")
    folder, out = Path(os.path.abspath(files[0])).parent, copy.deepcopy(config)

    def move(path):
        keep = not isinstance(path, str) or not path or Path(path).is_absolute()
        return path if keep else os.path.relpath(folder / path)

    for key in PATH_KINDS:
        *parents, leaf = key.split(".")
        section = out
        for name in parents:
            section = section.get(name) if isinstance(section, dict) else None
        if isinstance(section, dict) and leaf in section:
            section[leaf] = move(section[leaf])
    report = out.get("report")
    if isinstance(report, dict) and isinstance(report.get("compare"), list):
        report["compare"] = [move(p) for p in report["compare"]]
    return out


def config_hash(cfg: dict) -> str:
    """sha256 of a config (or any JSON-able dict) with sorted keys: what a result was made from."""
    return hashlib.sha256(json.dumps(cfg, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


BENCH_STUDIES = ("scaling", "tokenizer_ablation")  # beyond the paper and mostly timing: `make bench` (config: bench)


def study_on(cfg: dict, name: str) -> bool:
    """A study switched on by its own `enabled`; a bench study (BENCH_STUDIES) only where `bench` is on too."""
    return cfg[name]["enabled"] and (name not in BENCH_STUDIES or cfg.get("bench") is True)


def result_hash(cfg: dict) -> str:
    """The config hash results and routers record: `bench` and `timing` left out, since each adds or drops timing
    rules and changes no other result (switching targets re-exports no router, and the workflow and `toolgate export`
    agree)."""
    return config_hash({**{k: v for k, v in cfg.items() if k != "timing"}, "bench": False})


def load(path) -> dict:
    """Read and resolve a YAML config file (its paths relative to the working directory: :func:`rebase`)."""
    return resolve(rebase(io.read_yaml(path) or {}, [path]), str(path))


# ----------------------------------------------------------------------------- typed sections
# The package receives config sections as frozen dataclasses filled from the validated config;
# defaults live only in the schema (``section(name)`` fills them from there).
@dataclass(frozen=True)
class Run:
    """What every stage needs: seed, languages, lexical text processing and the cache folder."""
    seed: int
    langs: tuple[str, ...]
    text: Text
    cache: str


SECTIONS: dict[str, type] = {}


def _section(name: str):
    """Registers a dataclass as config section ``name``: its fields are the schema's keys of that section, in schema
    order (tests/unit/test_config.py checks it), and carry no defaults: :func:`section` fills them from the schema."""
    def register(cls):
        SECTIONS[name] = cls
        return cls
    return register


@_section("text")
@dataclass(frozen=True)
class Text:
    """`text:` lexical text processing (character n-grams)."""
    ngram: int
    pad: bool


@_section("roles")
@dataclass(frozen=True)
class Roles:
    """`roles:` which ranker plays each part of the paper's design."""
    lexical: str
    encoder: str
    second_encoder: str


@_section("cost")
@dataclass(frozen=True)
class Cost:
    """`cost:` the latency benchmark."""
    queries: int
    warmup: int


@_section("scaling")
@dataclass(frozen=True)
class Scaling:
    """`scaling:` the catalog-size benchmark."""
    enabled: bool
    sizes: tuple[int, ...]
    queries: int
    warmup: int
    rank_bm25_max: int
    encoder_queries: int
    encoder_max: int


@_section("tokenizer_ablation")
@dataclass(frozen=True)
class TokenizerAblation:
    """`tokenizer_ablation:` BM25 over Korean lexical units."""
    enabled: bool
    variants: tuple[str, ...]
    ks: tuple[int, ...]
    seeds: int
    resamples: int
    queries: int
    warmup: int


@_section("gate")
@dataclass(frozen=True)
class Gate:
    """`gate:` the abstention gate study."""
    top_k: int
    folds: int
    resamples: int
    cluster_units: tuple[str, ...]
    calibration_bins: int
    danger_budget: float


@_section("routing")
@dataclass(frozen=True)
class Routing:
    """`routing:` baselines and band pipelines."""
    gate: str
    grid: int
    ask_cap: float
    band_top: int
    fidelities: tuple[float, ...]
    pipelines: dict


@_section("ablation")
@dataclass(frozen=True)
class Ablation:
    """`ablation:` the candidate-count ablation."""
    ks: str | tuple[int, ...]
    seeds: int


@_section("external")
@dataclass(frozen=True)
class External:
    """`external:` the FunctionChat-Bench and BFCL cross-checks."""
    enabled: bool
    mirror: str
    bfcl_limit: int
    sets: tuple[str, ...]


@_section("native")
@dataclass(frozen=True)
class Native:
    """`native:` native tool calling through an OpenAI-compatible server."""
    enabled: bool
    server: str
    roster: dict
    conditions: tuple[str, ...]
    concurrency: int
    readiness_timeout_s: int
    request_timeout_s: int
    endpoint: str
    tool_language: str


@_section("tournament")
@dataclass(frozen=True)
class Tournament:
    """`tournament:` the multiple-choice tournament ranker on a chat model."""
    enabled: bool
    checkpoint: str
    group_size: int
    max_prompt_chars: int


@_section("router")
@dataclass(frozen=True)
class RouterSettings:
    """`router:` exported routers and their cost."""
    enabled: bool
    pipelines: tuple[str, ...]
    select: str
    rankers: tuple[str, ...]
    gates: tuple[str, ...]
    ranker: str
    gate: str
    examples: tuple[str, ...]
    examples_c: float
    examples_chars: tuple[int, int] | None
    ask_cap: float | None
    utility: dict
    latency_budget_ms: float
    latency_table: str
    latency_ms: dict
    allow_regret: bool
    max_chars: int
    top_k: int
    tie_margins: tuple[float, ...]
    tie_cost: float
    probes: str
    blind: str
    queries: int
    warmup: int


@_section("data_check")
@dataclass(frozen=True)
class DataCheck:
    """`data_check:` design targets of the utterance set, checked before any ranker."""
    enabled: bool
    jaccard_medians: dict
    tolerance: float
    quartiles_separate: bool
    zero_overlap_max: dict
    out_longer: bool
    length_auc: dict | None
    min_agreement: float


def _typed(cls, data: dict):
    return cls(**{f.name: tuple(v) if isinstance(v := data[f.name], list) else v for f in fields(cls)})


def section(name: str, data: dict | None = None):
    """Config section ``name`` as its dataclass; keys left out take the schema's defaults."""
    sub = schemas.schema("config")["properties"][name]
    full = copy.deepcopy(data or {})
    schemas.fill_defaults(full, sub)
    err = best_match(schemas.validator(sub).iter_errors(full))
    if err is not None:
        field, message = schemas.schema_error(err)
        raise InputError("config", message, field=f"{name}.{field}" if field else name)
    return _typed(SECTIONS[name], full)


def run(seed: int, langs, text: dict | None = None, cache: str = "") -> Run:
    """The experiment-wide settings (``text`` as in the config, schema defaults for what it leaves out)."""
    return Run(seed, tuple(langs), section("text", text), cache)
