"""The experiment object: typed params read as declared attributes, the inputs loaded once, the layout."""
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import ROOT
from toolgate.config import load
from toolgate.core.errors import InputError
from toolgate.experiment import Experiment, Layout, typed


def test_typed_params_read_as_attributes_and_a_missing_one_names_itself():
    exp = Experiment(typed({"run": {"seed": 3, "langs": ["ko", "en"], "text": {"ngram": 3, "pad": True}},
                            "gate": load(ROOT / "config.yaml")["gate"]}))
    assert exp.seed == 3 and exp.run.langs == ("ko", "en") and exp.gate.danger_budget == 0.06
    with pytest.raises(AttributeError, match="has no 'routing'"):
        exp.routing


def test_the_catalog_and_utterances_load_once(tmp_path, monkeypatch):
    from toolgate import experiment

    calls = []
    monkeypatch.setattr(experiment, "load_inputs", lambda *a: calls.append(a) or ([{"id": "a"}], [{"slice": "match"},
                                                                                       {"slice": "mismatch_hard"}]))
    exp = Experiment(SimpleNamespace(run=SimpleNamespace(langs=("en",))), SimpleNamespace(catalog="c", utterances="u"))
    assert exp.catalog == [{"id": "a"}] and len(exp.rows) == 2 and exp.main == [{"slice": "match"}]
    assert calls == [("c", "u", ("en",))]


def test_every_attribute_the_stages_read_is_declared():
    """The params are declared attributes (an editor sees them): each ``exp.<name>`` in toolgate and the scripts is
    one, so none reads a param the class does not type."""
    sources = [*(ROOT / "workflow" / "toolgate").rglob("*.py"), *(ROOT / "workflow" / "scripts").glob("*.py")]
    read = {m for p in sources for m in re.findall(r"\bexp\.([a-z_]+)", p.read_text(encoding="utf-8"))}
    exp = Experiment(SimpleNamespace())
    assert {"gate", "run", "rankers", "signals"} <= read
    assert not {n for n in read if not hasattr(Experiment, n) and n not in vars(exp)}


def test_the_layout_is_the_workflows():
    lay = Layout("default")
    assert lay.table("gate_loco") == Path("results/default/tables/gate_loco.csv")
    assert (lay.fig, lay.logs, lay.scores("bm25")) == (Path("figures/default"), Path("logs/default"),
                                                      Path("results/default/scores/bm25.npz"))
    assert (lay.signals, lay.gates, lay.cache) == (
        Path("results/default/gate/signals.csv"), Path("results/default/gate/gates.json"), Path("results/default/cache"))


def test_from_config_names_the_first_missing_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = load(ROOT / "config.yaml")
    with pytest.raises(InputError, match="run the workflow for config.yaml first"):
        Experiment.from_config(cfg, "config.yaml")
