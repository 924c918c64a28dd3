"""``toolgate import FORMAT SRC... --out DIR``: any tool benchmark as an experiment folder.

* :mod:`.readers`: the formats (openai-tools, tool-rows, bfcl, functionchat, beir), each read into an
  :class:`~toolgate.external.adapters.ExternalSet` (BFCL and FunctionChat through the adapters
  of the external cross-checks; tool-rows in :mod:`.toolrows`), with what reading decided (:mod:`.policy`);
* :mod:`.build`: sample, tool split, candidate lists and route entries, then ``catalog.jsonl``,
  ``utterances.jsonl``, ``config.yaml`` and ``import.json``, validated before they appear;
* :func:`read_over`: the same reading and preparing of a set's requests over an exported router's catalog
  (``toolgate decide --eval FILE... --eval-format FORMAT``).
"""
from __future__ import annotations

from .build import Destination, Options, requests_over, write_import
from .readers import FORMATS, read

__all__ = ["FORMATS", "Destination", "Options", "import_set", "read", "read_over", "requests_over", "write_import"]


def import_set(fmt: str, sources, dest: Destination, options: Options, lang: str | None = None) -> dict:
    """Read ``sources`` in format ``fmt`` and write the experiment folder ``dest.folder``; returns import.json's
    info."""
    ext, notes = read(fmt, sources, lang, options)
    return write_import(ext, options, dest, notes, sources)


def read_over(fmt: str, sources, catalog: list[dict], options: Options, lang: str | None = None):
    """(utterances, info) of the requests in ``sources`` over ``catalog`` (``decide --eval``), read and prepared as
    ``import`` reads and prepares them (:func:`~.build.requests_over`)."""
    ext, notes = read(fmt, sources, lang, options)
    return requests_over(ext, catalog, options, notes)
