"""Deterministic utterance generator: template banks + catalog + seed -> utterances.

The generator samples Korean/English template pairs from the authored banks in
``data/templates/<catalog>/`` (format: docs/formats.md), fills placeholders from
bilingual lexicons, and enforces the configured composition exactly. The same
catalog, banks, composition and seed give a byte-identical file.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections import Counter
from pathlib import Path

import yaml

from . import __version__, io, korean
from .config import Run
from .errors import InputError

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::([가-힣]+))?\}")
OUT_SUBTYPES = {"external_service": "delegate", "multistep": "delegate", "chat": "chat"}
COMPOSITION_KEYS = ("in_catalog_pairs", "ask_pairs", "match_share", "external_service_pairs",
                    "multistep_pairs", "chat_pairs", "min_per_action", "mismatch_hard_pairs")


# ----------------------------------------------------------------------------- banks
def load_banks(folder, catalog: list[dict], langs=io.LANGS) -> dict:
    """Lexicons, per-action template banks and out-of-catalog banks, validated."""
    folder = Path(folder)
    lex_path = folder / "lexicons.yaml"
    lexicons = _yaml(lex_path) if lex_path.exists() else {}
    for name, entries in lexicons.items():
        _check_fillers(lex_path, name, entries, langs)
    actions = {t["id"]: t for t in catalog if t["kind"] == "action"}
    banks = {"lexicons": lexicons, "actions": {}, "out": {k: [] for k in OUT_SUBTYPES}, "files": {}}
    files = sorted(p for p in folder.glob("*.yaml") if p.name != "lexicons.yaml")
    if not files:
        raise InputError(folder, "no template bank files (*.yaml) in the folder")
    for path in files:
        banks["files"][path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
        doc = _yaml(path) or {}
        unknown = set(doc) - {"actions", "out"}
        if unknown:
            raise InputError(path, "unknown top-level key", field=sorted(unknown)[0])
        for tool_id, bank in (doc.get("actions") or {}).items():
            where = f"actions.{tool_id}"
            if tool_id not in actions:
                raise InputError(path, f"'{tool_id}' is not an action in the catalog", field=where)
            if tool_id in banks["actions"]:
                raise InputError(path, f"'{tool_id}' has banks in two files", field=where)
            banks["actions"][tool_id] = _action_bank(path, where, bank, actions[tool_id], lexicons, langs)
        for subtype, entries in (doc.get("out") or {}).items():
            if subtype not in OUT_SUBTYPES:
                raise InputError(path, f"unknown out subtype (known: {', '.join(OUT_SUBTYPES)})", field=f"out.{subtype}")
            for i, entry in enumerate(entries or []):
                where = f"out.{subtype}[{i}]"
                _check_pair(path, where, entry, langs, extra={"tools"})
                slots = {name: _lexicon(path, where, name, lexicons) for name in _placeholders(entry, langs)}
                banks["out"][subtype].append({"texts": {l: entry[l] for l in langs}, "slots": slots,
                                               "tools": entry.get("tools", [])})
    missing = [a for a in actions if a not in banks["actions"]]
    if missing:
        raise InputError(folder, f"{len(missing)} catalog actions have no template bank, e.g. '{missing[0]}'")
    return banks


def _yaml(path: Path):
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise InputError(path, f"cannot parse YAML: {exc}".splitlines()[0], None if line is None else line + 1) from None


def _check_fillers(path, where, entries, langs) -> None:
    if not isinstance(entries, list) or not entries:
        raise InputError(path, "expected a non-empty list of {ko, en} fillers", field=where)
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or any(not str(e.get(l, "")).strip() for l in langs):
            raise InputError(path, f"filler needs non-empty {', '.join(langs)}", field=f"{where}[{i}]")


def _check_pair(path, where, entry, langs, extra=frozenset()) -> None:
    if not isinstance(entry, dict):
        raise InputError(path, "expected a mapping with one template per language", field=where)
    for lang in langs:
        if not isinstance(entry.get(lang), str) or not entry[lang].strip():
            raise InputError(path, "missing or empty template", field=f"{where}.{lang}")
    unknown = set(entry) - set(langs) - set(extra)
    if unknown:
        raise InputError(path, "unknown key", field=f"{where}.{sorted(unknown)[0]}")


def _placeholders(entry, langs) -> set[str]:
    names = [{m.group(1) for m in PLACEHOLDER.finditer(entry[l])} for l in langs]
    return set.union(*names)


def _lexicon(path, where, name, lexicons):
    if name not in lexicons:
        raise InputError(path, f"placeholder '{{{name}}}' is not a lexicon", field=where)
    return lexicons[name]


def _action_bank(path, where, bank, tool, lexicons, langs) -> dict:
    if not isinstance(bank, dict):
        raise InputError(path, "expected a mapping with slots, match and mismatch", field=where)
    slots = {}
    for name, spec in (bank.get("slots") or {}).items():
        if isinstance(spec, str):
            spec = _lexicon(path, f"{where}.slots.{name}", spec, lexicons)
        else:
            _check_fillers(path, f"{where}.slots.{name}", spec, langs)
        slots[name] = spec
    required = set(tool["parameters"].get("required", []))
    out = {"slots": slots}
    for slice_ in ("match", "mismatch", "mismatch_hard"):
        entries = bank.get(slice_) or []
        if not entries and slice_ != "mismatch_hard":  # the hard slice is optional per action
            raise InputError(path, "no templates", field=f"{where}.{slice_}")
        full, ask = [], []
        for i, entry in enumerate(entries):
            w = f"{where}.{slice_}[{i}]"
            _check_pair(path, w, entry, langs, extra={"args"})
            names = _placeholders(entry, langs)
            for name in names:
                if name not in slots:
                    raise InputError(path, f"placeholder '{{{name}}}' is not declared under slots", field=w)
            for lang in langs:
                if _placeholders({lang: entry[lang]}, [lang]) != names:
                    raise InputError(path, "the two languages use different placeholders", field=w)
            stated = names | set(entry.get("args") or {})
            template = {"texts": {l: entry[l] for l in langs}, "missing": sorted(required - stated)}
            (ask if template["missing"] else full).append(template)
        if not full and entries:
            raise InputError(path, "no template states every required parameter", field=f"{where}.{slice_}")
        out[slice_], out[f"{slice_}_ask"] = full, ask
    return out


# ----------------------------------------------------------------------------- rendering
def render(template: str, values: dict[str, dict], lang: str) -> str:
    """Fill ``{name}`` / ``{name:을}`` with the filler's text in ``lang``."""
    def sub(m):
        word = values[m.group(1)][lang]
        return korean.attach(word, m.group(2)) if m.group(2) and lang == "ko" else word
    return PLACEHOLDER.sub(sub, template)


# ----------------------------------------------------------------------------- generation
def generate(catalog: list[dict], banks: dict, composition: dict, seed: int, langs=io.LANGS) -> list[dict]:
    """Utterance rows (docs/formats.md) with exactly the configured composition."""
    comp = _check_composition_config(composition, catalog)
    rng = random.Random(seed)
    pairs = _in_catalog_pairs(catalog, banks, comp, rng, langs) + _out_pairs(banks, comp, rng, langs)
    rng.shuffle(pairs)
    # The hard slice has its own stream and ids, so the main set does not depend on its size.
    hard = _hard_pairs(banks, comp["mismatch_hard_pairs"], random.Random(f"{seed}:mismatch_hard"), langs)
    used = {lang: set() for lang in langs}
    for pair in pairs + hard:
        for lang in langs:
            if pair["texts"][lang] in used[lang]:
                raise InputError("<generator>", f"duplicate {lang} text '{pair['texts'][lang]}'; add templates or fillers")
            used[lang].add(pair["texts"][lang])
    width = max(3, len(str(len(pairs))))
    numbered = [(f"p{i:0{width}d}", p) for i, p in enumerate(pairs, start=1)]
    numbered += [(f"h{i:0{width}d}", p) for i, p in enumerate(hard, start=1)]
    rows = []
    for pid, pair in numbered:
        for lang in langs:
            rows.append({"utterance_id": f"{pid}-{lang}", "pair_id": pid, "lang": lang, "text": pair["texts"][lang],
                         "gold_outcome": pair["outcome"], "gold_tool": pair["tool"], "slice": pair["slice"],
                         "subtype": pair["subtype"], "missing_slots": pair["missing"]})
    check_composition(rows, catalog, comp, langs)
    return rows


def _check_composition_config(composition: dict, catalog) -> dict:
    comp = {k: composition[k] for k in COMPOSITION_KEYS}
    n_match = comp["in_catalog_pairs"] * comp["match_share"]
    if abs(n_match - round(n_match)) > 1e-9:
        raise InputError("<config>", "in_catalog_pairs x match_share must be a whole number", field="utterances.composition.match_share")
    n_actions = sum(t["kind"] == "action" for t in catalog)
    if comp["in_catalog_pairs"] < n_actions * comp["min_per_action"]:
        raise InputError("<config>", f"in_catalog_pairs must be >= {n_actions} actions x min_per_action",
                         field="utterances.composition.in_catalog_pairs")
    if comp["ask_pairs"] > comp["in_catalog_pairs"]:
        raise InputError("<config>", "ask_pairs exceeds in_catalog_pairs", field="utterances.composition.ask_pairs")
    return comp


def _fill(rng: random.Random, texts: dict, slots: dict, langs, seen: set) -> dict | None:
    """Render a template pair with random fillers; None if every try repeats an earlier text."""
    used = {name: slots[name] for name in sorted(slots) if any(f"{{{name}" in texts[l] for l in langs)}
    for _ in range(50 if used else 1):
        values = {name: rng.choice(fillers) for name, fillers in used.items()}
        out = {lang: render(texts[lang], values, lang) for lang in langs}
        if out[langs[0]] not in seen:
            seen.add(out[langs[0]])
            return out
    return None


def _in_catalog_pairs(catalog, banks, comp, rng, langs) -> list[dict]:
    actions = [t["id"] for t in catalog if t["kind"] == "action"]
    n_in = comp["in_catalog_pairs"]
    base, extra = divmod(n_in, len(actions))
    counts = {a: base for a in actions}
    for a in rng.sample(actions, extra):
        counts[a] += 1
    order = actions[:]
    rng.shuffle(order)
    slots = [a for a in order for _ in range(counts[a])]
    # Evenly spaced slice assignment: exactly n_in * match_share slots are match,
    # and an action's slots alternate, so no action is all-match or all-mismatch.
    share, offset = comp["match_share"], rng.random()
    slices = ["match" if math.floor((i + 1) * share + offset) > math.floor(i * share + offset) else "mismatch"
              for i in range(n_in)]
    ask_idx = set()
    n_ask_match = (comp["ask_pairs"] + 1) // 2
    for slice_, n in (("match", n_ask_match), ("mismatch", comp["ask_pairs"] - n_ask_match)):
        cand = [i for i, (a, s) in enumerate(zip(slots, slices)) if s == slice_ and banks["actions"][a][f"{s}_ask"]]
        rng.shuffle(cand)
        room = Counter({a: len(banks["actions"][a][f"{slice_}_ask"]) for a in set(slots)})
        chosen = []
        for i in cand:  # at most as many ask items per action as it has distinct ask templates
            if len(chosen) < n and room[slots[i]] > 0:
                room[slots[i]] -= 1
                chosen.append(i)
        if len(chosen) < n:
            raise InputError("<templates>", f"only {len(chosen)} {slice_} slots have missing-slot templates; {n} ask pairs needed")
        ask_idx.update(chosen)
    decks: dict[tuple, list] = {}
    seen: set = set()
    pairs = []
    for i, (action, slice_) in enumerate(zip(slots, slices)):
        key = (action, f"{slice_}_ask" if i in ask_idx else slice_)
        pool = banks["actions"][action][key[1]]
        for _ in range(len(pool)):  # next template in a shuffled deck whose text is new
            if not decks.get(key):
                decks[key] = pool[:]
                rng.shuffle(decks[key])
            template = decks[key].pop()
            texts = _fill(rng, template["texts"], banks["actions"][action]["slots"], langs, seen)
            if texts:
                break
        else:
            raise InputError("<templates>", f"{action} {key[1]}: every template repeats an earlier text; add templates or fillers")
        pairs.append({"texts": texts, "tool": action, "slice": slice_,
                      "outcome": "ask" if i in ask_idx else "action",
                      "subtype": "missing_slot" if i in ask_idx else "single_action",
                      "missing": template["missing"] if i in ask_idx else []})
    return pairs


def _hard_pairs(banks, n: int, rng: random.Random, langs) -> list[dict]:
    """``n`` pairs from the actions' mismatch_hard templates (each template at most once, every action before repeats)."""
    pool = [(a, t) for a in sorted(banks["actions"]) for t in banks["actions"][a]["mismatch_hard"]]
    if len(pool) < n:
        raise InputError("<templates>", f"{n} mismatch_hard pairs needed, the banks have {len(pool)} templates")
    rng.shuffle(pool)
    turn, nth = Counter(), []
    for action, _ in pool:  # an action's k-th template comes after every action's (k-1)-th: round-robin
        nth.append(turn[action])
        turn[action] += 1
    pool = [at for _, at in sorted(zip(nth, pool), key=lambda x: x[0])]
    pairs, seen = [], set()
    for action, template in pool:
        if len(pairs) == n:
            break
        texts = _fill(rng, template["texts"], banks["actions"][action]["slots"], langs, seen)
        if texts:
            pairs.append({"texts": texts, "tool": action, "slice": "mismatch_hard", "outcome": "action",
                          "subtype": "single_action", "missing": []})
    if len(pairs) < n:
        raise InputError("<templates>", f"only {len(pairs)} distinct mismatch_hard pairs; {n} configured")
    return pairs


def _out_pairs(banks, comp, rng, langs) -> list[dict]:
    pairs, seen = [], set()
    for subtype, outcome in OUT_SUBTYPES.items():
        n, pool = comp[f"{subtype}_pairs"], banks["out"][subtype]
        if len(pool) < n:
            raise InputError("<templates>", f"{n} {subtype} pairs needed, the banks have {len(pool)}")
        for entry in rng.sample(pool, n):
            texts = _fill(rng, entry["texts"], entry["slots"], langs, seen)
            if texts is None:
                raise InputError("<templates>", f"{subtype} template repeats an earlier text: {entry['texts'][langs[0]]}")
            pairs.append({"texts": texts, "tool": None, "slice": "out", "outcome": outcome,
                          "subtype": subtype, "missing": []})
    return pairs


# ----------------------------------------------------------------------------- checks
def check_composition(rows: list[dict], catalog: list[dict], comp: dict, langs=io.LANGS) -> None:
    """Raise InputError unless ``rows`` have exactly the configured composition."""
    def fail(msg):
        raise InputError("<generated utterances>", msg)

    pairs: dict[str, list[dict]] = {}
    for r in rows:
        pairs.setdefault(r["pair_id"], []).append(r)
    for pid, members in pairs.items():
        if sorted(m["lang"] for m in members) != sorted(langs):
            fail(f"pair {pid} is incomplete: languages {[m['lang'] for m in members]}")
        labels = {(m["gold_outcome"], m["gold_tool"], m["slice"], m["subtype"], tuple(m["missing_slots"])) for m in members}
        if len(labels) != 1:
            fail(f"pair {pid} has different labels across languages")
    for key in ("utterance_id",):
        dup = [k for k, v in Counter(r[key] for r in rows).items() if v > 1]
        if dup:
            fail(f"duplicate {key} {dup[0]}")
    texts = Counter((r["lang"], r["text"]) for r in rows)
    dup = [k for k, v in texts.items() if v > 1]
    if dup:
        fail(f"duplicate text {dup[0]}")
    heads = [m[0] for m in pairs.values()]
    c = Counter((h["slice"], h["gold_outcome"], h["subtype"]) for h in heads)
    n_match = round(comp["in_catalog_pairs"] * comp["match_share"])
    expected = {
        "in-catalog pairs": (sum(h["slice"] in ("match", "mismatch") for h in heads), comp["in_catalog_pairs"]),
        "mismatch_hard pairs": (sum(h["slice"] == "mismatch_hard" for h in heads), comp["mismatch_hard_pairs"]),
        "match pairs": (sum(h["slice"] == "match" for h in heads), n_match),
        "mismatch pairs": (sum(h["slice"] == "mismatch" for h in heads), comp["in_catalog_pairs"] - n_match),
        "ask pairs": (sum(h["gold_outcome"] == "ask" for h in heads), comp["ask_pairs"]),
        "external_service pairs": (c[("out", "delegate", "external_service")], comp["external_service_pairs"]),
        "multistep pairs": (c[("out", "delegate", "multistep")], comp["multistep_pairs"]),
        "chat pairs": (c[("out", "chat", "chat")], comp["chat_pairs"]),
    }
    for what, (got, want) in expected.items():
        if got != want:
            fail(f"{what}: got {got}, configured {want}")
    total = (comp["in_catalog_pairs"] + comp["external_service_pairs"] + comp["multistep_pairs"] + comp["chat_pairs"]
             + comp["mismatch_hard_pairs"])
    if len(pairs) != total:
        fail(f"{len(pairs)} pairs, configured {total}")
    actions = {t["id"]: t for t in catalog if t["kind"] == "action"}
    per_action = Counter(h["gold_tool"] for h in heads if h["slice"] in ("match", "mismatch"))
    for a in actions:
        if per_action[a] < comp["min_per_action"]:
            fail(f"action {a} appears in {per_action[a]} in-catalog pairs, fewer than {comp['min_per_action']}")
    for h in heads:
        if h["gold_tool"] is not None and h["gold_tool"] not in actions:
            fail(f"gold tool {h['gold_tool']} is not in the catalog")
        if h["gold_outcome"] == "ask":
            required = set(actions[h["gold_tool"]]["parameters"].get("required", []))
            if not h["missing_slots"] or not set(h["missing_slots"]) <= required:
                fail(f"pair {h['pair_id']}: missing_slots {h['missing_slots']} are not required parameters")


def config_hash(gen_config: dict) -> str:
    return hashlib.sha256(json.dumps(gen_config, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def generate_files(catalog_path, templates, composition: dict, run: Run, outputs) -> None:
    """Generate, validate against the loaders, and write utterances + provenance sidecar (``outputs``: both paths)."""
    (out_path, sidecar_path), seed, langs = outputs, run.seed, run.langs
    catalog = io.load_catalog(catalog_path, langs)
    banks = load_banks(templates, catalog, langs)
    rows = generate(catalog, banks, composition, seed, langs)
    io.check_utterances(enumerate(rows, start=1), catalog, out_path, langs)
    text = io.dumps_jsonl(rows)
    catalog_sha = hashlib.sha256(Path(catalog_path).read_bytes()).hexdigest()
    gen_config = {"composition": {k: composition[k] for k in COMPOSITION_KEYS}, "seed": seed, "langs": list(langs),
                  "catalog_sha256": catalog_sha, "template_sha256": banks["files"]}
    io.write_atomic(out_path, text)
    io.write_json(sidecar_path, {**gen_config, "config_hash": config_hash(gen_config), "toolgate_version": __version__,
                                 "rows": len(rows), "utterances_sha256": hashlib.sha256(text.encode()).hexdigest()})
