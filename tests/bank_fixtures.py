"""A small template bank folder shared by the bank and generator tests."""
import pytest
import yaml


def _pairs(prefix, n, slot=""):
    return [{"ko": f"{prefix} 한국어 {i} {slot}".strip(), "en": f"{prefix} english {i} {slot}".strip()} for i in range(n)]


@pytest.fixture
def bank_dir(tmp_path):
    d = tmp_path / "banks"
    d.mkdir()
    (d / "lexicons.yaml").write_text(yaml.safe_dump({"contact": [{"ko": "엄마", "en": "Mom"}, {"ko": "동생", "en": "my brother"}]},
                                                    allow_unicode=True))
    actions = {}
    for a in ("set_alarm", "make_call"):
        actions[a] = {"slots": {"x": "contact"},
                      "match": _pairs(f"{a} m", 3, "{x:을}") + _pairs(f"{a} m-ask", 1),
                      "mismatch": _pairs(f"{a} mm", 3, "{x:이}") + _pairs(f"{a} mm-ask", 1),
                      "mismatch_hard": _pairs(f"{a} hard", 2, "{x}")}
    actions["check_battery"] = {"match": _pairs("battery m", 3), "mismatch": _pairs("battery mm", 3)}
    out = {"external_service": _pairs("ext", 3), "multistep": _pairs("multi", 2, "{contact}"), "chat": _pairs("chat", 2)}
    (d / "banks.yaml").write_text(yaml.safe_dump({"actions": actions, "out": out}, allow_unicode=True))
    return d
