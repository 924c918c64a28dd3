"""CLINC150's protocol (toolgate.router.clinc150): the threshold from validation alone, the figures on test."""
import numpy as np
import pandas as pd
import pytest

from toolgate.router import clinc150 as C
from toolgate.router.clinc150 import OOS, PUBLISHED, clinc150_frame, grid_encoders, threshold_on


def test_threshold_is_the_most_accurate_on_validation_lowest_on_ties():
    p = np.array([0.9, 0.8, 0.3, 0.2])
    pred = np.array(["a", "b", "a", "b"])
    gold = np.array(["a", "b", OOS, OOS])
    assert threshold_on(p, pred, gold) == 0.8  # 0.8 and 0.9 > 0.3: 0.8 keeps both in-scope rows, rejects both oos
    assert threshold_on(p, pred, np.array(["a", "b", "a", "b"])) == 0.0


def test_ece_is_the_top_probability_against_the_intent_being_right():
    """Test rows a (0.9, right), b (0.7, right), oos (0.8 on a, never right), oos (0.6 on b): bins 6-9 hold one row
    each, gaps 0.1, 0.3, 0.8, 0.6 over a quarter each."""
    class Fixed:
        def top_action(self, emb, texts):
            return np.array(["a", "b", "a", "b"]), np.array([0.9, 0.7, 0.8, 0.6])
    data = {"test": [("x", "a"), ("y", "b")], "oos_test": [("z", OOS), ("w", OOS)]}
    row = C.test_row(Fixed(), lambda texts: np.zeros((len(texts), 1)), data, 0.75)
    assert row["ece"] == pytest.approx((0.1 + 0.3 + 0.8 + 0.6) / 4)
    assert row["in_scope_accuracy"] == 50.0 and row["oos_recall"] == 50.0


def _data():
    """Two intents on two axes, out of scope on a third; the test split's oos lies where validation's did not."""
    def rows(points, label):
        return [(f"{label}|{x}|{y}|{z}", label) for x, y, z in points]
    a, b = [(1, 0, 0), (0.9, 0.1, 0)], [(0, 1, 0), (0.1, 0.9, 0)]
    return {"train": rows(a, "a") + rows(b, "b"), "val": rows(a, "a") + rows(b, "b"),
            "oos_val": rows([(0.5, 0.5, 0)], OOS), "test": rows(a, "a") + rows(b, "b"),
            "oos_test": rows([(0.5, 0.5, 0), (0.45, 0.55, 0)], OOS)}


def _encode(texts):
    out = []
    for t in texts:
        parts = t.split("|")
        out.append([float(v) for v in parts[1:]] if len(parts) == 4 else [1.0 if t == "a" else 0.0, float(t == "b"), 0.0])
    return np.array(out)


def test_frame_has_both_conditions_and_the_published_rows():
    df, grid = clinc150_frame(_data(), {"axes": _encode}, cs=(100.0,))
    mine = df[df["source"] == "this run"].set_index("condition")
    assert list(mine.index) == ["examples (training split)", "intent names only"]
    row = mine.loc["examples (training split)"]
    assert row["in_scope_accuracy"] == 100.0 and row["oos_recall"] == 100.0 and row["auroc"] == 1.0
    assert 0 <= row["ece"] <= 1 and np.isnan(df.loc[df["system"] == "BERT", "ece"].item())
    assert row["train_texts"] == 4 and mine.loc["intent names only", "train_texts"] == 2
    assert len(df) == 2 + len(PUBLISHED) and df.loc[df["system"] == "BERT", "oos_recall"].item() == 52.3
    assert len(grid) == 2


def test_each_grid_point_is_reported_as_it_is_fitted(caplog):
    with caplog.at_level("INFO", logger="toolgate.console"):
        clinc150_frame(_data(), {"axes": _encode}, cs=(1.0, 100.0))
    lines = [r.getMessage() for r in caplog.records if r.name == "toolgate.console"]
    assert sum("validation accuracy" in x for x in lines) == 4 and sum("encoded in" in x for x in lines) == 2
    assert sum("on test" in x for x in lines) == 2 and "encoding 4 training and 5 validation texts" in lines[0]


def test_the_grid_choice_is_the_most_accurate_on_validation():
    """A blind encoder (every request at one point) cannot separate out of scope: the axes one is chosen, whichever
    comes first, and the blind one's row carries a lower validation accuracy."""
    def blind(texts):
        return np.ones((len(texts), 3)) / np.sqrt(3)
    for encoders in ({"blind": blind, "axes": _encode}, {"axes": _encode, "blind": blind}):
        df, grid = clinc150_frame(_data(), encoders, cs=(1.0, 100.0))
        assert set(df.loc[df["source"] == "this run", "encoder"]) == {"axes"}
        g = grid[grid["condition"] == "examples (training split)"].set_index(["encoder", "c"])["val_accuracy"]
        assert g.loc[("axes", 100.0)] > g.loc[("blind", 100.0)]
        assert len(grid) == 8


def test_character_n_grams_reach_the_model():
    """The texts name their labels (a|..., b|...): with n-grams, even the blind encoder tells a from b."""
    def blind(texts):
        return np.ones((len(texts), 3)) / np.sqrt(3)
    df, _ = clinc150_frame(_data(), {"blind": blind}, cs=(100.0,), chars=(1, 4))
    row = df[df["condition"] == "examples (training split)"].iloc[0]
    assert row["chars"] == "1-4" and row["in_scope_accuracy"] == 100.0
    plain, _ = clinc150_frame(_data(), {"blind": blind}, cs=(100.0,))
    assert plain.loc[plain["condition"] == "examples (training split)", "chars"].item() == "none"
    assert plain.loc[plain["condition"] == "examples (training split)", "in_scope_accuracy"].item() == 50.0


def test_joined_encoders_are_unit_length(monkeypatch):
    import toolgate.core.encoders as E

    class Fixed:
        def __init__(self, v):
            self.v = np.asarray(v, float)

        def encode_queries(self, texts):
            calls[self.name] += 1
            return np.tile(self.v, (len(texts), 1))
    calls = {"a": 0, "b": 0}

    def made(spec):
        enc = Fixed([1.0, 0.0] if spec["backend"] == "a" else [0.6, 0.8])
        enc.name = spec["backend"]
        return enc
    monkeypatch.setattr(E, "make_encoder", made)
    monkeypatch.setattr(C, "BUNDLED", ("a", "b"))
    enc = grid_encoders(["a", "a+b"])
    enc["a"](["x", "y"])
    joined = enc["a+b"](["x", "y"])
    assert joined.shape == (2, 4) and np.allclose(np.linalg.norm(joined, axis=1), 1.0)
    assert enc["a+b"](["x", "y"]) is joined  # memoised: validation and test are encoded once per encoder
    assert calls == {"a": 1, "b": 1}  # each backend once, alone or joined


@pytest.mark.parametrize("span", [["3", "1"], ["0", "0"], ["1", "9"]])
def test_a_bad_n_gram_span_is_refused_before_any_data_is_read(span, tmp_path, capsys):
    from toolgate.cli import main

    assert main(["clinc150", "--chars", *span, "--mirror", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "--chars" in capsys.readouterr().err and not (tmp_path / "out").exists()


def _offline(*args, **kwargs):
    raise OSError("offline")


@pytest.mark.parametrize("args,field", [(["--c", "0"], "--c"), (["--c", "3", "nan"], "--c"), (["--c", "-1"], "--c"),
                                        (["--encoder", "usem3+nosuch"], "--encoder"), (["--out", "FILE"], "--out"),
                                        (["--encoder", "onnx"], "--encoder"), ([], "--mirror")])
def test_bad_arguments_are_refused_before_any_data_is_read(args, field, tmp_path, capsys, monkeypatch):
    from toolgate.cli import main

    monkeypatch.setenv("TOOLGATE_EXTERNAL_CACHE", str(tmp_path / "cache"))  # no mirror: nothing made in the checkout
    monkeypatch.setattr("toolgate.external.sources._download", _offline)  # a machine with a network fails alike

    (tmp_path / "FILE").write_text("")
    args = [str(tmp_path / a) if a == "FILE" else a for a in args]
    out = args[args.index("--out") + 1] if "--out" in args else str(tmp_path / "out")
    assert main(["clinc150", "--mirror", str(tmp_path / "none"), *args] + ([] if "--out" in args else ["--out", out])) == 2
    assert f"field '{field}'" in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert not (tmp_path / "cache" / "clinc150").exists()  # a failed download leaves no folder behind


def test_the_command_prints_its_progress_once_and_leaves_logging_as_it_was(tmp_path, monkeypatch, capsys):
    import logging

    from toolgate.cli import main

    def frame(*args):
        logging.getLogger("toolgate.console").info("clinc150: a progress line")
        return pd.DataFrame({"system": ["x"]}), pd.DataFrame({"c": [1.0]})
    monkeypatch.setattr(C, "read_clinc", lambda folder: {})
    monkeypatch.setattr(C, "clinc150_frame", frame)
    console = logging.getLogger("toolgate.console")
    before = (console.level, console.propagate, list(console.handlers))
    assert main(["clinc150", "--encoder", "usem3", "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().err.count("clinc150: a progress line") == 1
    assert (console.level, console.propagate, list(console.handlers)) == before
