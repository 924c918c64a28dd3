"""Glue for workflow/scripts: route a rule's output streams into its log file."""
from __future__ import annotations

import contextlib
import logging
import sys


@contextlib.contextmanager
def logged(snakemake):
    """Send logging, stdout and stderr of the block to ``snakemake.log[0]``; the ``toolgate.console`` logger's
    messages also go to the terminal Snakemake runs in (the job's own stderr)."""
    with open(snakemake.log[0], "w", encoding="utf-8") as fh, \
            contextlib.redirect_stdout(fh), contextlib.redirect_stderr(fh):
        handler = logging.StreamHandler(fh)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        terminal = logging.StreamHandler(sys.__stderr__)
        # a rule's jobs differ by their wildcards (scores of ranker=e5 beside ranker=bm25): they name the job
        wildcards = "".join(f" {k}={v}" for k, v in getattr(snakemake, "wildcards", {}).items())
        prefix = f"[{snakemake.rule}{wildcards}]".replace("%", "%%")
        terminal.setFormatter(logging.Formatter(prefix + " %(message)s"))
        root, console = logging.getLogger(), logging.getLogger("toolgate.console")
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        # the console logger's own level: its INFO lines pass even where a library raises the root logger's level
        # (a propagated record meets only the handlers' levels on the way up, so they reach the log file too)
        level = console.level
        console.setLevel(logging.INFO)
        console.addHandler(terminal)
        try:
            yield
        except Exception:
            logging.exception("rule %s failed", snakemake.rule)
            raise
        finally:
            root.removeHandler(handler)
            console.removeHandler(terminal)
            console.setLevel(level)
