"""The project's own errors: every bad input surfaces as an InputError; a missing optional extra as MissingExtra."""
from __future__ import annotations

import importlib


class InputError(ValueError):
    """Bad input, located: ``file:line: field 'x': message``.

    ``line`` is 1-based (None for file-level problems); ``field`` is a dotted
    path into the JSON object (None when the whole line is bad).
    """

    def __init__(self, path, message: str, line: int | None = None, field: str | None = None):
        self.path, self.line, self.field, self.message = str(path), line, field, message
        where = self.path if line is None else f"{self.path}:{line}"
        what = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {what}{message}")


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message names the extra."""


def require(module: str, extra: str | None = None):
    """Import a dependency, or say what installs it: the extra ``extra``, or (None) the project itself."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        how = f"install the extra: pip install -e '.[{extra}]'" if extra else "reinstall the project: pip install -e ."
        raise MissingExtra(f"'{module}' is not installed ({exc}); {how}") from None
