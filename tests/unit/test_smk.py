"""toolgate.smk.logged: a rule's output goes to its log file; the ``toolgate.console`` logger's lines reach the
terminal Snakemake runs in (the job's real stderr) as well."""
import logging
from types import SimpleNamespace

from conftest import utterance, write_jsonl
from toolgate.core.scores import compute_scores
from toolgate.experiment import Experiment
from toolgate.smk import logged


def fake_snakemake(tmp_path, rule="demo", **wildcards):
    return SimpleNamespace(log=[str(tmp_path / f"{rule}.log")], rule=rule, wildcards=wildcards)


def test_console_lines_reach_the_terminal_and_the_log(tmp_path, capfd):
    smk, root = fake_snakemake(tmp_path), logging.getLogger().level
    try:
        with logged(smk):
            logging.getLogger("toolgate.console").info("stage one of two")
            logging.getLogger("toolgate.some.module").info("a plain log line")
            print("printed")
            logging.getLogger().setLevel(logging.WARNING)  # a library raising the root level mutes no console line
            logging.getLogger("toolgate.console").info("stage two of two")
    finally:
        logging.getLogger().setLevel(root)
    out, err = capfd.readouterr()
    assert "[demo] stage one of two\n" in err and "[demo] stage two of two\n" in err
    assert "a plain log line" not in err + out and "printed" not in err + out
    log = (tmp_path / "demo.log").read_text(encoding="utf-8")
    assert "stage one of two" in log and "stage two of two" in log and "a plain log line" in log and "printed" in log
    # the handlers and the level go when the block ends: outside a rule the console logger writes nowhere
    assert not logging.getLogger("toolgate.console").handlers
    assert logging.getLogger("toolgate.console").level == logging.NOTSET
    logging.getLogger("toolgate.console").info("after the rule")
    assert "after the rule" not in capfd.readouterr().err
    assert "after the rule" not in (tmp_path / "demo.log").read_text(encoding="utf-8")


def test_a_long_rule_prints_its_stages(tmp_path, capfd, small_catalog):
    """The scores rule (minutes with an encoder) says on the terminal what it indexes and scores; its job's wildcards
    tell one ranker's lines from another's."""
    catalog = write_jsonl(tmp_path / "catalog.jsonl", small_catalog)
    utterances = write_jsonl(tmp_path / "u.jsonl", [utterance(i) for i in range(3)])
    with logged(fake_snakemake(tmp_path, "scores", ranker="bm25")):
        run = SimpleNamespace(langs=("ko", "en"), text=SimpleNamespace(ngram=3, pad=True), cache=None)
        compute_scores(Experiment(SimpleNamespace(spec={"type": "bm25", "variant": "E1"}, run=run),
                                  SimpleNamespace(catalog=catalog, utterances=utterances), [tmp_path / "s.npz"]))
    err = capfd.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("[scores ranker=bm25] ")]
    assert lines[0] == f"[scores ranker=bm25] indexing {len(small_catalog)} catalog entries"
    assert any(x.startswith("[scores ranker=bm25] scored 3 utterances in ") for x in lines)
    assert "scored 3 utterances" in (tmp_path / "scores.log").read_text(encoding="utf-8")
