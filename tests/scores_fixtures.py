"""Small score matrices shared by the score-matrix, selection and rerank tests."""
import numpy as np

from toolgate.core.scores import Scores


def scores_of(matrix, uids):
    """Scores over actions t0..t{n-1} plus one route entry (chat, scored 0)."""
    n = matrix.shape[1]
    return Scores(np.array(uids), np.array([f"t{i}" for i in range(n)] + ["chat"]), np.array(["action"] * n + ["route"]),
                  np.hstack([matrix, np.zeros((len(uids), 1))]))


ROWS = [{"utterance_id": "a", "lang": "en", "slice": "match", "gold_outcome": "action", "gold_tool": "t0"},
        {"utterance_id": "b", "lang": "en", "slice": "mismatch", "gold_outcome": "action", "gold_tool": "t2"},
        {"utterance_id": "c", "lang": "ko", "slice": "mismatch", "gold_outcome": "ask", "gold_tool": "t1"},
        {"utterance_id": "d", "lang": "ko", "slice": "out", "gold_outcome": "delegate", "gold_tool": None}]
