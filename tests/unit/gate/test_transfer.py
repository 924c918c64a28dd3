"""Every gate on this set and on external sets, within and transferred."""
from types import SimpleNamespace

import numpy as np
import pandas as pd

from toolgate.config import section
from toolgate.core.signals import compared_gates, registry
from toolgate.experiment import Experiment
from toolgate.gate.transfer import closing_sentences, transfer_frame, write_gate_transfer
from toolgate.report.plots import CHANCE, gate_transfer_figure


def test_transfer_table_own_set_then_external_within_before_transfer():
    reg = registry("bm25", ["e5"])
    gates = compared_gates(reg)
    rng = np.random.default_rng(1)
    n = 40
    signals = pd.DataFrame({"utterance_id": [f"u{i}" for i in range(n)], "pair_id": [f"p{i // 2}" for i in range(n)],
                            "slice": ["match", "out"] * (n // 2), "in_catalog": [1, 0] * (n // 2),
                            **{g: rng.normal(size=n) for g in gates}})
    gate = section("gate", {"resamples": 30})
    own = transfer_frame(signals, None, reg, "mine", gate, 0)
    assert list(own["gate"]) == gates and set(own["set"]) == {"mine"}
    assert own.set_index("gate").loc["g3_enc", "mode"] == "within" and own.set_index("gate").loc["e5_knn", "mode"] == "raw"
    ext = pd.DataFrame([{"dataset": d, "signal": s, "gate": g, "mode": m, "auc": 0.6, "ci_low": 0.5, "ci_high": 0.7,
                         "n_in": 5, "n_out": 5}
                        for d in ("bfcl", "bfcl_2plus", "functionchat")
                        for s, g, m in (("g3_transfer", "g3", "transfer"), ("g3", "g3", "within"),
                                        ("top_score", "top_score", "raw"), ("e5_knn", "e5_knn", "raw"))])
    both = transfer_frame(signals, ext, reg, "mine", gate, 0)
    tail = both[both["set"] != "mine"]
    assert list(zip(tail["gate"], tail["set"], tail["mode"])) == [
        ("g3", "functionchat", "within"), ("g3", "functionchat", "transfer"), ("g3", "bfcl_2plus", "within"),
        ("g3", "bfcl_2plus", "transfer"), ("e5_knn", "functionchat", "raw"), ("e5_knn", "bfcl_2plus", "raw")]
    fig = gate_transfer_figure(both, reg, "mine")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["within", "raw", "fitted on mine (transfer)", CHANCE]
    assert [ax.get_title() for ax in fig.axes] == ["mine: 20 in / 20 out", "functionchat_calldecision (external): 5 in "
                                                   "/ 5 out", "bfcl_2plus (external): 5 in / 5 out"]
    alone = gate_transfer_figure(own, reg)  # no external study: no transfer in the legend
    assert [t.get_text() for t in alone.legends[0].get_texts()] == ["within", "raw", CHANCE]


def test_the_rule_entry_reads_its_experiment(tmp_path):
    """Without an external study (an empty ``external`` input) the table is the own set's, named after the
    experiment."""
    reg = registry("bm25", ["e5"])
    rng = np.random.default_rng(1)
    signals = pd.DataFrame({"utterance_id": [f"u{i}" for i in range(40)], "pair_id": [f"p{i // 2}" for i in range(40)],
                            "slice": ["match", "out"] * 20, "in_catalog": [1, 0] * 20,
                            **{g: rng.normal(size=40) for g in compared_gates(reg)}})
    signals.to_csv(tmp_path / "signals.csv", index=False)
    gate = section("gate", {"resamples": 30})
    exp = Experiment(SimpleNamespace(signals=reg, experiment="mine", gate=gate, run=SimpleNamespace(seed=0)),
                     input=SimpleNamespace(signals=tmp_path / "signals.csv", external=[]),
                     output=SimpleNamespace(table=tmp_path / "gate_transfer.csv"))
    table = write_gate_transfer(exp)
    pd.testing.assert_frame_equal(table, transfer_frame(pd.read_csv(tmp_path / "signals.csv"), None, reg, "mine",
                                                        gate, 0))
    assert "within only" in (tmp_path / "gate_transfer.md").read_text(encoding="utf-8")


def test_closing_sentences_quote_the_table():
    reg = registry("bm25", ["e5"])
    t = pd.DataFrame([("g3", "s1", "within", 0.70, 0.60, 0.80), ("e5_maxcos", "s1", "raw", 0.90, 0.85, 0.95),
                      ("g3_enc", "s1", "within", 0.88, 0.80, 0.93), ("g3_enc", "s1", "transfer", 0.60, 0.50, 0.70),
                      ("g3", "s2", "within", 0.55, 0.45, 0.65)],
                     columns=["gate", "set", "mode", "auc", "ci_low", "ci_high"])
    (s1,) = closing_sentences(t, reg)  # s2 has no G3+enc row: no sentence
    assert s1 == ("s1: best single signal e5_maxcos (raw) 0.900 [0.850, 0.950]; G3+enc within 0.880 [0.800, 0.930], "
                  "inside e5_maxcos's interval; transfer 0.600 [0.500, 0.700], below e5_maxcos's interval.")
