"""Deterministic utterance generator: template banks + catalog + seed -> utterances.

The generator samples Korean/English template pairs from the authored banks in
``data/templates/<catalog>/`` (format: docs/formats.md), fills placeholders from
bilingual lexicons, and enforces the configured composition exactly. The same
catalog, banks, composition and seed give a byte-identical file.
"""
from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from pathlib import Path

from .. import __version__
from ..config import config_hash
from ..core import io
from ..core.catalog import action_ids, actions, load_catalog
from ..core.errors import InputError
from ..utterances import OUT_SUBTYPES, check_utterances
from .banks import load_banks, render

COMPOSITION_KEYS = ("in_catalog_pairs", "ask_pairs", "match_share", "external_service_pairs",
                    "multistep_pairs", "chat_pairs", "min_per_action", "mismatch_hard_pairs")


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
    n_actions = len(actions(catalog))
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
    actions = action_ids(catalog)
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
    acts = {t["id"]: t for t in actions(catalog)}
    per_action = Counter(h["gold_tool"] for h in heads if h["slice"] in ("match", "mismatch"))
    for a in acts:
        if per_action[a] < comp["min_per_action"]:
            fail(f"action {a} appears in {per_action[a]} in-catalog pairs, fewer than {comp['min_per_action']}")
    for h in heads:
        if h["gold_tool"] is not None and h["gold_tool"] not in acts:
            fail(f"gold tool {h['gold_tool']} is not in the catalog")
        if h["gold_outcome"] == "ask":
            required = set(acts[h["gold_tool"]]["parameters"].get("required", []))
            if not h["missing_slots"] or not set(h["missing_slots"]) <= required:
                fail(f"pair {h['pair_id']}: missing_slots {h['missing_slots']} are not required parameters")


def generate_files(exp) -> None:
    """Generate from the banks in ``exp.templates``, validate against the loaders, and write utterances + provenance
    sidecar (``exp.output``: named ``utterances`` and ``meta``, the sidecar)."""
    catalog_path, templates, composition = exp.input.catalog, exp.templates, exp.composition
    out_path, sidecar_path, seed, langs = exp.output.utterances, exp.output.meta, exp.seed, exp.run.langs
    catalog = load_catalog(catalog_path, langs)
    banks = load_banks(templates, catalog, langs)
    rows = generate(catalog, banks, composition, seed, langs)
    check_utterances(enumerate(rows, start=1), catalog, out_path, langs)
    text = io.dumps_jsonl(rows)
    catalog_sha = hashlib.sha256(Path(catalog_path).read_bytes()).hexdigest()
    gen_config = {"composition": {k: composition[k] for k in COMPOSITION_KEYS}, "seed": seed, "langs": list(langs),
                  "catalog_sha256": catalog_sha, "template_sha256": banks["files"]}
    io.write_atomic(out_path, text)
    io.write_json(sidecar_path, {**gen_config, "config_hash": config_hash(gen_config), "toolgate_version": __version__,
                                 "rows": len(rows), "utterances_sha256": hashlib.sha256(text.encode()).hexdigest()})
