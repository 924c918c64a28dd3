"""The wall-time log: a recorded command lands in the CSV, and docs/timings.md and the README's block are written
from the CSV alone."""
import csv

import pytest

from toolgate.bench import walltimes


def _project(tmp_path, readme="# x\n\n<!-- timings -->\nstale\n<!-- /timings -->\n\nafter\n"):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(readme)
    return ["--docs", str(tmp_path / "docs"), "--readme", str(tmp_path / "README.md")]


def test_record_appends_a_row_and_writes_both_tables_from_the_csv(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = _project(tmp_path)
    assert walltimes.main(paths + ["record", "--label", "nothing", "--", "true"]) == 0
    assert walltimes.main(paths + ["record", "--label", "nothing", "--note", "again", "--", "true"]) == 0
    rows = list(csv.DictReader((tmp_path / "docs" / "timings.csv").open()))
    assert [r["label"] for r in rows] == ["nothing", "nothing"] and rows[1]["note"] == "again"
    assert all(0 <= float(r["wall_s"]) < 30 and r["source"] == "measured: true" and r["load_before"] for r in rows)

    with (tmp_path / "docs" / "timings.csv").open("a") as fh:  # a row typed elsewhere shows up in both tables
        fh.write("<= 2026-01-01,make x,~138,,,2,abc1234,README before the diet,\n")
    (tmp_path / "docs" / "timings.md").unlink()
    assert walltimes.main(paths + ["render"]) == 0
    readme = (tmp_path / "README.md").read_text()
    assert "stale" not in readme and readme.endswith("<!-- /timings -->\n\nafter\n")
    assert "| make x | ~2:18 | 1 run | <= 2026-01-01 |" in readme and "(2 runs)" in readme
    full = (tmp_path / "docs" / "timings.md").read_text()
    assert full.count("| nothing |") == 2 and "| make x | ~2:18 |" in full


def test_a_readme_without_markers_is_refused_before_the_command_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    paths = _project(tmp_path, readme="# no markers\n")
    assert walltimes.main(paths + ["record", "--label", "x", "--", "touch", "ran"]) == 2
    assert "no '<!-- timings -->'" in capsys.readouterr().err and not (tmp_path / "ran").exists()
    assert not (tmp_path / "docs" / "timings.csv").exists()


def test_a_failed_command_is_not_recorded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = _project(tmp_path)
    assert walltimes.main(paths + ["record", "--label", "x", "--", "false"]) == 1
    assert not (tmp_path / "docs" / "timings.csv").exists()


def test_a_bad_wall_time_names_its_line(tmp_path):
    path = tmp_path / "timings.csv"
    path.write_text(",".join(walltimes.FIELDS) + "\nd,x,3,,,2,c,s,\nd,y,fast,,,2,c,s,\n")
    with pytest.raises(walltimes.InputError, match=r"timings.csv:3: field 'wall_s'"):
        walltimes.read_rows(path)


def test_clock():
    assert [walltimes.clock(w) for w in ("38.7", "138", "~600", "59.6")] == ["38.7 s", "2:18", "~10:00", "59.6 s"]
