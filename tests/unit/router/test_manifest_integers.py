"""A manifest's integer settings written as whole floats (3.0: JSON Schema's integer takes them) load and decide as
the integers they are."""
import json

from router_fixtures import artifact, manifest, sealed  # noqa: F401  (fixture)
from toolgate import Router


def test_whole_float_settings_decide_as_their_integers(artifact):
    want = Router.load(artifact).decide("alarm at 7")
    m = manifest(artifact)
    m["limits"]["top_k"], m["limits"]["max_chars"] = float(m["limits"]["top_k"]), float(m["limits"]["max_chars"])
    m["gate"]["top_k"], m["text"]["ngram"] = float(m["gate"]["top_k"]), float(m["text"]["ngram"])
    (artifact / "router.json").write_text(json.dumps(sealed(m)))
    got = Router.load(artifact).decide("alarm at 7")
    assert (got.kind, got.tool, got.p_in_catalog, got.candidates, got.reason) == \
        (want.kind, want.tool, want.p_in_catalog, want.candidates, want.reason)
