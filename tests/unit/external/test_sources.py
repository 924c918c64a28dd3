"""toolgate.external.sources: mirror location, pinned checksums, the download branch (network faked)."""
import shutil
from pathlib import Path

import pytest

from toolgate.core.errors import InputError
from toolgate.external import sources as S


def test_mirror_copy_with_wrong_bytes_fails_checksum(mirror, tmp_path):
    shutil.copytree(mirror / "functionchat", tmp_path / "functionchat")
    assert S.locate("functionchat", tmp_path) == tmp_path / "functionchat"
    f = tmp_path / "functionchat" / "FunctionChat-CallDecision.jsonl"
    f.chmod(0o644)
    data = bytearray(f.read_bytes())
    data[100] ^= 1
    f.write_bytes(bytes(data))
    with pytest.raises(InputError, match="sha256 mismatch") as err:
        S.locate("functionchat", tmp_path)
    assert "FunctionChat-CallDecision.jsonl" in str(err.value)
    f.unlink()
    with pytest.raises(InputError, match="missing file"):
        S.locate("functionchat", tmp_path)


def test_locate_without_mirror_or_network_names_both_options(tmp_path, monkeypatch):
    def offline(source, dest, timeout=60):
        raise OSError("network is unreachable")

    monkeypatch.setattr(S, "_download", offline)
    with pytest.raises(S.ExternalDataUnavailable) as err:
        S.locate("bfcl", tmp_path / "no-mirror", tmp_path / "cache")
    msg = str(err.value)
    assert str(tmp_path / "no-mirror" / "bfcl") in msg and S.ENV_MIRROR in msg and "external.mirror" in msg
    assert "https://raw.githubusercontent.com/ShishirPatil/gorilla/6ea57973c7a6097fd7c5915698c54c17c5b1b6c8/" in msg
    assert "network is unreachable" in msg
    assert not list((tmp_path / "cache").rglob("*.json"))  # nothing half-written


def test_locate_uses_environment_mirror(tmp_path, monkeypatch):
    monkeypatch.setenv(S.ENV_MIRROR, str(tmp_path))
    monkeypatch.setattr(S, "_download", lambda *a, **k: (_ for _ in ()).throw(OSError("offline")))
    with pytest.raises(S.ExternalDataUnavailable, match=str(tmp_path / "functionchat")):
        S.locate("functionchat", cache=tmp_path / "cache")


def test_download_path_verifies_and_caches(mirror, tmp_path, monkeypatch):
    """The download branch, with the 'network' served from the mirror."""
    calls = []

    def fake(source, dest, timeout=60):
        calls.append(source)
        rel = source.split("/bfcl_eval/data/")[1]
        shutil.copyfile(mirror / "bfcl" / rel, dest)

    monkeypatch.setattr(S, "_download", fake)
    files = ["BFCL_v4_irrelevance.json"]
    folder = S.locate("bfcl", tmp_path / "none", tmp_path / "cache", files)
    assert folder == tmp_path / "cache" / "bfcl" and (folder / files[0]).is_file()
    assert calls == [S.url("bfcl", files[0])]
    S.locate("bfcl", tmp_path / "none", tmp_path / "cache", files)  # cached: no second download
    assert len(calls) == 1

    def corrupt(source, dest, timeout=60):
        Path(dest).write_bytes(b"{}\n")

    monkeypatch.setattr(S, "_download", corrupt)
    with pytest.raises(InputError, match="sha256 mismatch"):
        S.locate("bfcl", tmp_path / "none", tmp_path / "cache2", files)
    assert not (tmp_path / "cache2" / "bfcl" / files[0]).exists()
