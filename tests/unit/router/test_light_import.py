"""A router runs on the library alone (issue 37): importing the package imports none of the study's libraries, and
a ladder or band router loads and decides without them. Each check is a fresh interpreter, so what another test imported
does not count."""
import json
import os
import subprocess
import sys

import numpy as np

from router_fixtures import artifact, make_artifact  # noqa: F401  (fixture)

HEAVY = ("pandas", "scipy", "sklearn", "jsonschema", "yaml")
CODE = """
import json, sys
from toolgate import Router
heavy = lambda: [m for m in {heavy!r} if m in sys.modules]
got = {{"imported": heavy()}}
if len(sys.argv) > 1:
    r = Router.load(sys.argv[1])
    got["loaded"] = heavy()
    got["kind"] = r.decide("alarm at 7").kind
    got["many"] = [d.kind for d in r.decide_many(["alarm at 7", "alarm at 8"])]  # a batch: BM25's product too
    got["decided"] = heavy()
print(json.dumps(got))
"""


def _fresh(*folder) -> dict:
    out = subprocess.run([sys.executable, "-c", CODE.format(heavy=HEAVY), *map(str, folder)], capture_output=True,
                         text=True, check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    return json.loads(out.stdout)


def test_importing_the_router_imports_no_study_library():
    assert _fresh() == {"imported": []}


def test_a_ladder_router_loads_and_decides_without_the_study_libraries(tmp_path):
    got = _fresh(make_artifact(tmp_path, real_gate=False, gate=None))
    assert got == {"imported": [], "loaded": [], "kind": "act", "many": ["act", "act"], "decided": []}


def test_a_band_router_loads_and_decides_without_the_study_libraries(artifact):
    assert _fresh(artifact) == {"imported": [], "loaded": [], "kind": "act", "many": ["act", "act"], "decided": []}


def test_importing_the_router_reads_no_package_metadata():
    """``toolgate.__version__`` is read when asked for (a router reads it when it loads), not at import."""
    code = ("import sys; from toolgate import Router; import toolgate; a = 'importlib.metadata' in sys.modules; "
            "v = toolgate.__version__; print(a, 'importlib.metadata' in sys.modules, v == toolgate.__dict__['__version__'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True"]


def test_a_band_router_decides_on_numpy_columns(artifact):
    """The router's raw signals are numpy columns that read like the study's frame; the payload applies to either."""
    from toolgate import Router
    from toolgate.core.inputs import Columns
    from toolgate.core.models import payload_scores

    router = Router.load(artifact)
    _, _, signals, value = router.scores(["alarm at 7", "tell me a joke"])
    assert isinstance(signals, Columns) and all(isinstance(v, np.ndarray) for v in signals.values())
    fit = router.manifest["gate"]["payload"]
    assert np.array_equal(value, payload_scores(fit, signals.frame()))
    assert np.array_equal(value, payload_scores(fit, dict(signals)))
    assert np.array_equal(signals[fit["features"]].to_numpy(), signals.frame()[fit["features"]].to_numpy())


def test_a_sparse_bm25_index_fits_and_scores_without_scipy():
    """A router over a large catalog fits its index at load in the sparse layout: numpy alone (scipy blocked)."""
    code = ("import sys; sys.modules['scipy'] = None\n"
            "from toolgate.core.bm25 import BM25\n"
            "m = BM25().fit(['set an alarm', 'turn on wifi', 'play music'] * 40, layout='sparse')\n"
            "print(m.layout, m.score('alarm wifi').shape, m.score_many(['alarm', 'wifi on']).shape)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.stdout.split() == ["sparse", "(120,)", "(2,", "120)"]
