"""One experiment as every stage sees it: its typed config sections, seed and run settings, its files, the catalog and
utterances loaded once and its score matrices by ranker name.

Built by :meth:`Experiment.from_snakemake` in a rule's script (the rule's declared params, typed, and its named
inputs and outputs: a config change reruns exactly the rules whose params hold it) or by
:meth:`Experiment.from_config` for a command run after the workflow (``toolgate export``: every section, and the
inputs where the workflow wrote them, :class:`Layout`). A stage function takes the experiment and reads what it
needs: ``exp.gate``, ``exp.run``, ``exp.input.signals``, ``exp.main``, ``exp.scores("bm25")``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Generic, TypeVar, overload

from .config import SECTIONS, run, section, utterances_path
from .core.errors import InputError
from .utterances import load_inputs, main_set

if TYPE_CHECKING:  # the attributes' types only
    from .config import (
        Ablation,
        Cost,
        DataCheck,
        External,
        Gate,
        Native,
        Roles,
        RouterSettings,
        Routing,
        Run,
        Scaling,
        TokenizerAblation,
        Tournament,
    )
    from .core.signals import Signal


@dataclass(frozen=True)
class Layout:
    """Where an experiment's files live (rules/common.smk takes its paths from here)."""
    name: str

    @property
    def res(self) -> Path:
        return Path("results") / self.name

    @property
    def fig(self) -> Path:
        return Path("figures") / self.name

    @property
    def logs(self) -> Path:
        return Path("logs") / self.name

    @property
    def tables(self) -> Path:
        return self.res / "tables"

    @property
    def cache(self) -> Path:
        return self.res / "cache"

    @property
    def signals(self) -> Path:
        """Every request's gate signals and fold (rule gate_auc)."""
        return self.res / "gate" / "signals.csv"

    @property
    def gates(self) -> Path:
        """The fitted gates' payloads (rule gate_auc)."""
        return self.res / "gate" / "gates.json"

    def table(self, name: str) -> Path:
        return self.tables / f"{name}.csv"

    def scores(self, ranker: str) -> Path:
        return self.res / "scores" / f"{ranker}.npz"

    def router(self, name: str) -> Path:
        return self.res / "router" / name


def typed(params) -> SimpleNamespace:
    """A rule's params typed: ``run`` -> Run, ``signals`` -> the signal registry, ``gate`` -> Gate, ... (a section
    given as None, a study that is off, stays None)."""
    from .core.signals import registry

    out = {}
    for name, value in params.items():
        if name == "run":
            value = run(**value)
        elif name == "signals":
            value = registry(**value)
        elif name in SECTIONS and value is not None:
            value = section(name, value)
        out[name] = value
    return SimpleNamespace(**out)


LIMITS = ("max_chars", "top_k", "tie_margins", "tie_cost")  # the router settings an export reads for limits


def provenance(cfg: dict) -> dict:
    """What an exported router records of its experiment (the workflow passes the same as the export rules'
    ``provenance``): name, config hash, the lexical ranker and the router's limits."""
    from .config import result_hash

    return {"experiment": cfg["experiment"], "config_hash": result_hash(cfg), "lexical": cfg["roles"]["lexical"],
            "limits": {k: cfg["router"][k] for k in LIMITS}}


T = TypeVar("T")


class Param(Generic[T]):
    """An experiment attribute read from its params; a rule that does not pass it gets an AttributeError naming it."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, exp: None, owner=None) -> Param[T]: ...

    @overload
    def __get__(self, exp: Experiment, owner=None) -> T: ...

    def __get__(self, exp, owner=None):
        if exp is None:
            return self
        try:
            return getattr(exp.params, self.name)
        except AttributeError:
            raise AttributeError(f"the experiment has no '{self.name}' (not a param of this rule)") from None


class Experiment:
    """``params``: typed config sections and settings, each one of the attributes below (``exp.gate``; a rule passes
    only those its stage reads); ``input`` / ``output``: named paths."""

    # experiment-wide
    run: Param[Run] = Param()
    experiment: Param[str] = Param()  # its name
    config: Param[dict] = Param()  # the whole resolved config (the report)
    provenance: Param[dict] = Param()  # what an exported router records (:func:`provenance`)
    # config sections, typed (:mod:`toolgate.config`)
    gate: Param[Gate] = Param()
    routing: Param[Routing] = Param()
    roles: Param[Roles] = Param()
    cost: Param[Cost] = Param()
    scaling: Param[Scaling] = Param()
    tokenizer_ablation: Param[TokenizerAblation] = Param()
    ablation: Param[Ablation] = Param()
    external: Param[External | None] = Param()  # None where a rule passes it for a study that is off
    native: Param[Native] = Param()
    tournament: Param[Tournament] = Param()
    router: Param[RouterSettings] = Param()
    data_check: Param[DataCheck] = Param()
    utterances: Param[dict] = Param()  # the utterances section as in the config
    composition: Param[dict] = Param()  # utterances.composition
    # rankers and signals
    rankers: Param[dict[str, dict] | list[str]] = Param()  # {name: spec} or the names, in the config's order
    rerankers: Param[list[str]] = Param()
    lexical: Param[str] = Param()  # roles.lexical's name
    spec: Param[dict] = Param()  # one ranker's spec (rule scores, the tokenizer ablation)
    specs: Param[dict[str, dict]] = Param()  # {encoder ranker: spec}
    signals: Param[dict[str, Signal]] = Param()  # the signal registry
    top_k: Param[int] = Param()
    # one rule's own settings
    templates: Param[Path] = Param()  # generate_utterances: the template banks' folder
    annotations: Param[Path | str] = Param()  # data_check: the annotation passes' folder, or ""
    examples: Param[int] = Param()  # data_card: examples per slice
    onnx_model: Param[str] = Param()  # quant_retention
    shard: Param[int] = Param()  # embed_external: which of ``shards`` shares this job embeds
    shards: Param[int] = Param()
    own: Param[dict] = Param()  # gate_loco: the experiment's own set, {name, lexical spec}
    own_label: Param[str] = Param()  # external: fig4's name of the own set
    entry: Param[dict] = Param()  # native_calls: the checkpoint's roster entry
    tables: Param[Path] = Param()  # report: the tables' folder
    figures: Param[Path] = Param()  # report: the figures' folder

    def __init__(self, params: SimpleNamespace, input=None, output=None):
        self.params, self.input, self.output = params, input or SimpleNamespace(), output or SimpleNamespace()
        self._scores: dict = {}
        self.memo: dict = {}  # what a study computes once per experiment (toolgate.router.select.examples_of)

    @classmethod
    def from_snakemake(cls, snakemake, params=None) -> "Experiment":
        """A rule's experiment: its params typed (``params``: a nested mapping of them instead, e.g. the export
        rules' ``settings``), its named inputs and outputs."""
        return cls(typed(snakemake.params if params is None else params), snakemake.input, snakemake.output)

    @classmethod
    def from_config(cls, cfg: dict, config_path) -> "Experiment":
        """A resolved config's experiment after its workflow ran: every section typed, and as inputs the files the
        workflow wrote (InputError names the first one missing)."""
        from .core.rankers import encoder_rankers
        from .core.signals import registry

        lay = Layout(cfg["experiment"])
        inputs = SimpleNamespace(catalog=cfg["catalog"], utterances=utterances_path(cfg),
                                 signals=lay.signals, gates=lay.gates,
                                 scores=[lay.scores(n) for n in cfg["rankers"]],
                                 loco=[lay.table("router_loco")] if cfg["external"]["enabled"] else [])
        missing = [p for p in [*inputs.scores, inputs.signals, inputs.gates, *inputs.loco] if not Path(p).exists()]
        if missing:
            raise InputError(missing[0], f"does not exist; run the workflow for {config_path} first (snakemake "
                                         f"--configfile {config_path} {missing[0]})")
        params = {name: section(name, cfg[name]) for name in SECTIONS if name in cfg}
        params |= {"run": run(cfg["seed"], cfg["langs"], cfg["text"], str(lay.cache)),
                   "rankers": cfg["rankers"], "experiment": cfg["experiment"],
                   "signals": registry(cfg["roles"]["lexical"], encoder_rankers(cfg["rankers"])),
                   "provenance": provenance(cfg)}
        return cls(SimpleNamespace(**params), inputs)

    @property
    def seed(self) -> int:
        """The run's seed, or the rule's own ``seed`` param where it passes no ``run``."""
        return self.run.seed if hasattr(self.params, "run") else self.params.seed

    @cached_property
    def inputs(self) -> tuple[list[dict], list[dict]]:
        """(catalog, every utterance), read and checked against each other once."""
        return load_inputs(self.input.catalog, self.input.utterances, self.run.langs)

    @property
    def catalog(self) -> list[dict]:
        return self.inputs[0]

    @property
    def rows(self) -> list[dict]:
        return self.inputs[1]

    @cached_property
    def main(self) -> list[dict]:
        return main_set(self.rows)

    @property
    def score_paths(self) -> dict:
        """{ranker: score matrix path}: the config's rankers in order, the rule's ``scores`` input."""
        return dict(zip(self.rankers, self.input.scores))

    def scores(self, ranker: str):
        """A ranker's score matrix (:class:`toolgate.core.scores.Scores`), loaded once."""
        from .core.scores import load_scores

        if ranker not in self._scores:
            self._scores[ranker] = load_scores(self.score_paths[ranker])
        return self._scores[ranker]

    @cached_property
    def signal_table(self):
        """gate/signals.csv (``input.signals``): every request's signals and fold, read once."""
        import pandas as pd

        return pd.read_csv(self.input.signals)

    @cached_property
    def payloads(self) -> dict:
        """The fitted gates' payloads (gate/gates.json, ``input.gates``)."""
        from .core.models import load_payloads

        return load_payloads(self.input.gates)

    @property
    def study(self):
        """The gate and routing studies' settings (:class:`toolgate.routing.baselines.Study`)."""
        from .routing.baselines import Study

        return Study(self.run, self.gate, self.routing, self.signals)
