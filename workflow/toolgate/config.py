"""Experiment config: validation against the JSON schema, with defaults filled in."""
from __future__ import annotations

import copy

import jsonschema
import yaml
from jsonschema.exceptions import best_match

from . import io
from .errors import InputError


def _fill_defaults(node: dict, schema: dict) -> None:
    props = schema.get("properties", {})
    for key, sub in props.items():
        if key not in node and "default" in sub:
            node[key] = copy.deepcopy(sub["default"])
    extra = schema.get("additionalProperties")
    for key, value in node.items():
        sub = props.get(key, extra if isinstance(extra, dict) else None)
        if isinstance(value, dict) and sub and sub.get("type") == "object":
            _fill_defaults(value, sub)


def resolve(config: dict, source: str = "config") -> dict:
    """A validated copy of ``config`` with every default filled in.

    Raises InputError naming the offending key, e.g.
    ``config: field 'text.ngram': 0 is less than the minimum of 1``.
    """
    schema = io.schema("config")
    err = best_match(jsonschema.Draft202012Validator(schema).iter_errors(config))
    if err is not None:
        field, message = io.schema_error(err)
        raise InputError(source, message, field=field)
    out = copy.deepcopy(config)
    _fill_defaults(out, schema)
    return out


def load(path) -> dict:
    """Read and resolve a YAML config file."""
    with open(path, encoding="utf-8") as fh:
        return resolve(yaml.safe_load(fh) or {}, str(path))
