"""Index texts of catalog tools.

``E0`` = names + descriptions; ``E1`` = E0 + parameter names, parameter
descriptions, enum values and keywords (the second seed's "routing text").
Both variants concatenate every language of the experiment, in ``langs`` order.
"""
from __future__ import annotations

VARIANTS = ("E0", "E1")
ACTION = "action"  # the kind of a searchable entry; every other entry (kind "route") is a route step


def _lang_text(value, lang) -> str:
    return value if isinstance(value, str) else value.get(lang, "")


def index_text(tool: dict, variant: str = "E0", langs=("ko", "en")) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"unknown index text variant '{variant}' (known: {', '.join(VARIANTS)})")
    parts = [tool["names"].get(l, "") for l in langs] + [tool["descriptions"].get(l, "") for l in langs]
    if variant == "E1":
        props = tool["parameters"].get("properties", {})
        for name, spec in props.items():
            parts.append(name.replace("_", " "))
            descs = [_lang_text(spec.get("description", ""), l) for l in langs]
            parts.extend(dict.fromkeys(descs))  # a plain-string description is listed once
            parts.extend(str(v) for v in spec.get("enum", []))
        for l in langs:
            parts.extend(tool.get("keywords", {}).get(l, []))
    return " ".join(p for p in parts if p)


def is_action(tool: dict) -> bool:
    """Is a catalog entry a searchable action? Arrays of kinds (score matrices' columns) compare with ``ACTION``."""
    return tool["kind"] == ACTION


def actions(catalog: list[dict]) -> list[dict]:
    """The searchable actions (route entries excluded), in catalog order."""
    return [t for t in catalog if is_action(t)]


def action_ids(catalog: list[dict]) -> list[str]:
    return [t["id"] for t in actions(catalog)]


def route_ids(catalog: list[dict]) -> list[str]:
    """The route entries' ids, in catalog order."""
    return [t["id"] for t in catalog if not is_action(t)]
