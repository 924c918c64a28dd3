"""The project's own errors: every bad input surfaces as an InputError (:class:`Problems` gathers those of one file,
so a run reports them all); a missing optional extra as MissingExtra."""
from __future__ import annotations

import contextlib
import importlib

LIMIT = 50  # problems listed in one error; the rest counted


class InputError(ValueError):
    """Bad input, located: ``file:line: field 'x': message``.

    ``line`` is 1-based (None for file-level problems); ``field`` is a path into the JSON object, keys dotted and
    list items indexed (``examples[0].lang``: :func:`field_path`), None when the whole line is bad. ``problems``: the
    problems it reports, one by one (itself, or those :meth:`Problems.done` lists).
    """

    def __init__(self, path, message: str, line: int | None = None, field: str | None = None):
        self.path, self.line, self.field, self.message = str(path), line, field, message
        self.problems: list[InputError] = [self]
        where = self.path if line is None else f"{self.path}:{line}"
        what = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {what}{message}")


def field_path(parts) -> str:
    """``examples[0].lang`` of the keys and list indexes ``("examples", 0, "lang")``."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}" if out else str(p)
    return out


class Problems:
    """The InputErrors of one pass over a file: each record checked in :meth:`each`, then :meth:`done` raises one
    error listing them all (the first :data:`LIMIT`, a line each, and a count of the rest); a single one as it is."""

    def __init__(self):
        self.found: list[InputError] = []

    @contextlib.contextmanager
    def each(self):
        """Check one record: an InputError inside is kept and the pass goes on with the next record."""
        try:
            yield
        except InputError as exc:
            self.found.extend(exc.problems)  # a record's own list of problems, one by one

    def done(self) -> None:
        if len(self.found) == 1:
            raise self.found[0]
        if self.found:
            first, n = self.found[0], len(self.found)
            lines = "".join(f"\n  {e}" for e in self.found[:LIMIT])
            more = f"\n  ... and {n - LIMIT} more" if n > LIMIT else ""
            exc = InputError(first.path, f"{n} problems, each on a line below:{lines}{more}")
            exc.problems = list(self.found)
            raise exc


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message names the extra."""


def require(module: str, extra: str | None = None):
    """Import a dependency, or say what installs it: the extra ``extra``, or (None) the project itself."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        how = (f"install the extra '{extra}' from the project's checkout: pip install -e '.[{extra}]' (a package named "
               "toolgate on PyPI is another project)" if extra else "reinstall the project: pip install -e .")
        raise MissingExtra(f"'{module}' cannot be imported ({exc}); {how}") from None
