"""The decision rules of the ladder and the band, on numpy alone: the routing study fits their thresholds
(:mod:`.baselines`, :mod:`.pipelines`) and an exported router applies them (:mod:`toolgate.core.runtime`)
without the study's imports (issue 37)."""
from __future__ import annotations

import numpy as np

from .catalog import ACTION


def ladder_decisions(pool: np.ndarray, tool_ids, kinds, lo: float, hi: float):
    """(kind, tool) of the single-pool ladder: the pool's (actions + route entries) top entry runs when its score is
    >= hi, an action is asked (a route entry still taken) when >= lo, and the request is delegated below lo."""
    top = np.argmax(pool, axis=1)
    s1, ids, kinds = pool[np.arange(len(pool)), top], np.asarray(tool_ids)[top], np.asarray(kinds)[top]
    exec_kind = np.where(kinds == ACTION, "action", np.where(ids == "clarify", "ask", ids))
    kind = np.where(s1 >= hi, exec_kind, np.where(s1 >= lo, np.where(kinds == ACTION, "ask", exec_kind), "delegate"))
    return kind, np.where((kind != "delegate") & (kinds == ACTION), ids, "")


def band_decisions(prob: np.ndarray, lo: float, hi: float, top1: np.ndarray, route: np.ndarray):
    """(kind, tool): p >= hi executes top-1, lo <= p < hi asks to confirm it, p < lo takes the route step."""
    kind = np.where(prob >= hi, "action", np.where(prob >= lo, "ask", route))
    return kind, np.where(np.isin(kind, ["action", "ask"]), top1, "")
