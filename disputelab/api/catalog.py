"""What disputelab knows about before anything is run: the scenarios of its library, the
probing conditions and the behaviour parameters they act through, the protocols with
their parameters and seats, the papers' presets, and the public datasets.

    from disputelab.api import catalog

    [s["id"] for s in catalog.scenarios()]          # the built-in library
    catalog.describe_protocol("staged").turn_budget  # the parameter `budget` sets

Each function returns plain data (rows as dicts, frozen dataclasses, text); an unknown
name raises a `DisputelabError` that lists the known ones.
"""

from __future__ import annotations

import os
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from disputelab.errors import DisputelabError
from disputelab.protocols.base import PROTOCOLS, DisputeProtocol, get_protocol
from disputelab.protocols.presets import PRESETS, Preset, get_preset, preset_markdown
from disputelab.scenario.behaviour import PARAMETERS, Parameter
from disputelab.scenario.conditions import (
    CONDITIONS,
    SOCRATES_CONDITIONS,
    apply_condition,
    condition_parameters,
)
from disputelab.scenario.datasets import DATASETS, Dataset, DatasetError, data_root, get_dataset
from disputelab.scenario.datasets import case_files as dataset_files
from disputelab.scenario.datasets import fetch as fetch_repository
from disputelab.scenario.io import dump_scenario
from disputelab.scenario.library import builtin_ids, builtin_scenarios, resolve_scenario
from disputelab.scenario.schema import SOCRATES_DOMAINS

__all__ = [
    "BehaviourParameter",
    "CatalogError",
    "ConditionEffect",
    "ConditionInfo",
    "DatasetError",
    "DatasetInfo",
    "FetchedDataset",
    "ParameterInfo",
    "Preset",
    "ProfileChange",
    "ProtocolInfo",
    "SeatInfo",
    "behaviour_parameters",
    "condition_effects",
    "conditions",
    "dataset_root",
    "datasets",
    "describe_preset",
    "describe_protocol",
    "fetch_dataset",
    "presets",
    "protocols",
    "scenario_ids",
    "scenarios",
    "show_scenario",
    "socrates_conditions",
]

BehaviourParameter = Parameter  # a row of the behaviour table: default, neutral, range
SCENARIO_FORMATS = ("yaml", "json")


class CatalogError(DisputelabError, ValueError):
    """A name or format the catalog does not know; the message lists those it does."""


def _library(store: str | os.PathLike[str] | None) -> Path | None:
    # Imported here: the package's front door imports this module.
    from disputelab.api import library

    return library(store)


# ---- scenarios --------------------------------------------------------------------------


def scenario_ids() -> tuple[str, ...]:
    """The ids of the built-in library, without reading its scenarios."""
    return builtin_ids()


def scenarios() -> list[dict[str, Any]]:
    """The built-in library, one row per scenario: id, domain, parties and topics (how
    many) and title."""
    return [
        {
            "id": sid,
            "domain": s.domain,
            "parties": len(s.parties),
            "topics": len(s.topics),
            "title": s.title,
        }
        for sid, s in builtin_scenarios().items()
    ]


def scenarios_by_domain() -> list[dict[str, Any]]:
    """The built-in library grouped by domain, SoCRATES's eight first in the paper's
    order: how many multi-issue scenarios (with topics) and other cases each holds, and
    the multi-issue ids."""
    library = builtin_scenarios()
    present = {s.domain for s in library.values()}
    domains = [d for d in SOCRATES_DOMAINS if d in present] + sorted(
        present - set(SOCRATES_DOMAINS)
    )
    rows = []
    for d in domains:
        here = [s for s in library.values() if s.domain == d]
        topical = sorted(s.id for s in here if s.topics)
        rows.append(
            {
                "domain": d,
                "multi-issue": len(topical),
                "other": len(here) - len(topical),
                "ids": ", ".join(topical),
            }
        )
    return rows


def show_scenario(
    ref: str,
    *,
    format: str = "yaml",
    condition: str = "general",
    store: str | os.PathLike[str] | None = None,
) -> str:
    """A scenario (built-in id, an id imported into the store's library, or a file) in
    full, as YAML or JSON text, as `condition` changes it (offline construction).
    ScenarioError for a scenario that does not load; ConditionError for a condition that
    does not apply."""
    if format not in SCENARIO_FORMATS:
        raise CatalogError(f"unknown format {format!r}; use yaml or json")
    scenario = apply_condition(resolve_scenario(ref, _library(store)), condition)
    return dump_scenario(scenario, format)


# ---- conditions and behaviour parameters ------------------------------------------------


@dataclass(frozen=True)
class ConditionInfo:
    """A probing condition: how it is written (`posture:competing|...`) and what it does."""

    name: str
    usage: str
    description: str


def conditions() -> list[ConditionInfo]:
    """Every condition a scenario can be played under, in the order they are documented."""
    return [ConditionInfo(c.name, c.usage, c.description) for c in CONDITIONS.values()]


def socrates_conditions() -> tuple[str, ...]:
    """SoCRATES's fifteen probing conditions, as a spec's `conditions:` writes them."""
    return SOCRATES_CONDITIONS


def behaviour_parameters() -> list[BehaviourParameter]:
    """Every behaviour parameter of the rule agents: default, neutral value, the range
    sensitivity analysis samples, what it does and its source."""
    return list(PARAMETERS.values())


@dataclass(frozen=True)
class ProfileChange:
    """One number of a party's behaviour profile that a condition moves."""

    party: str
    quantity: str
    before: float
    after: float


@dataclass(frozen=True)
class ConditionEffect:
    """What a condition does on one scenario: the behaviour parameters it acts through
    (none: its effect is structural, and ablation cannot remove it), each party's profile
    numbers it moves, and the parties it adds."""

    condition: str
    scenario: str
    parameters: list[BehaviourParameter]
    changes: list[ProfileChange]
    added: list[str]


def condition_effects(
    condition: str, scenario: str = "tenancy", *, store: str | os.PathLike[str] | None = None
) -> ConditionEffect:
    """Which behaviour parameters `condition` moves, and what it changes per party of
    `scenario` (the numbers the rule policy runs on)."""
    from disputelab.agents.utility import rule_profile

    moved = condition_parameters(condition)
    base = resolve_scenario(scenario, _library(store))
    after = apply_condition(base, condition)
    changes = []
    for p, q in zip(base.parties, after.parties, strict=False):
        before, now = rule_profile(p), rule_profile(q)
        changes += [
            ProfileChange(p.id, k, v, now[k]) for k, v in before.items() if abs(now[k] - v) > 1e-12
        ]
    added = [q.id for q in after.parties[len(base.parties) :]]
    return ConditionEffect(condition, base.id, [PARAMETERS[name] for name in moved], changes, added)


# ---- protocols --------------------------------------------------------------------------


@dataclass(frozen=True)
class ParameterInfo:
    """A protocol parameter as `params` (`run --param KEY=VALUE`) takes it."""

    name: str
    type: str
    default: Any
    help: str


@dataclass(frozen=True)
class SeatInfo:
    """A seat at a protocol's table and the agent kinds that can fill it."""

    role: str
    interface: str
    optional: bool
    kinds: tuple[str, ...]
    default: str  # the kind without a model
    default_with_model: str  # the kind when a model is given


@dataclass(frozen=True)
class ProtocolInfo:
    """A protocol as its registration declares it."""

    name: str
    summary: str
    parameters: list[ParameterInfo]
    turn_budget: str  # the parameter a run's `budget` sets; "" where there is none
    turn_budget_unit: str
    seats: list[SeatInfo]
    plays_twin: bool
    evaluators: tuple[str, ...]
    judged_evaluators: tuple[str, ...]
    presets: tuple[str, ...]


def _type_name(annotation: Any) -> str:
    """A parameter's type as a user reads it: `int`, `float | None`, `one of a, b`."""
    if typing.get_origin(annotation) is typing.Literal:
        return "one of " + ", ".join(str(a) for a in typing.get_args(annotation))
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _info(p: DisputeProtocol) -> ProtocolInfo:
    params = [
        ParameterInfo(
            f,
            _type_name(info.annotation),
            info.get_default(call_default_factory=True),
            (info.description or "").rstrip("."),
        )
        for f, info in p.Params.model_fields.items()
    ]
    seats = [
        SeatInfo(s.role, s.interface, s.optional, s.kinds(), s.default, s.default_with_model)
        for s in p.seats
    ]
    presets = tuple(n for n, preset in PRESETS.items() if preset.protocol == p.name)
    return ProtocolInfo(
        p.name,
        p.summary,
        params,
        p.turn_budget,
        p.turn_budget_unit,
        seats,
        p.plays_twin,
        tuple(p.evaluators),
        tuple(p.judged_evaluators),
        presets,
    )


def protocols() -> list[ProtocolInfo]:
    """Every registered protocol, in registration order."""
    return [_info(p) for _, p in PROTOCOLS.items()]


def describe_protocol(name: str) -> ProtocolInfo:
    """One protocol: its parameters (name, type, default, help), its turn budget
    parameter and unit, its seats with the kinds each takes, its evaluators and the
    presets that play it."""
    if name not in PROTOCOLS.names():
        raise CatalogError(f"unknown protocol {name!r}; available: {', '.join(PROTOCOLS.names())}")
    return _info(get_protocol(name))


# ---- presets ----------------------------------------------------------------------------


def presets() -> list[Preset]:
    """Every paper's preset: its name, paper, protocol and settings."""
    return [p for _, p in PRESETS.items()]


def describe_preset(name: str) -> str:
    """Every setting of a preset, its value, its source in the paper, and what disputelab
    does without it, as a markdown table."""
    if name not in PRESETS:
        raise CatalogError(f"unknown preset {name!r}; available: {', '.join(PRESETS.names())}")
    return preset_markdown(get_preset(name))


# ---- datasets ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetInfo:
    """A public dataset and, where it is fetched, the folder of its case files."""

    name: str
    description: str
    url: str
    here: Path | None


@dataclass(frozen=True)
class FetchedDataset:
    """A dataset just fetched: where its case files are laid out, and the files."""

    dataset: Dataset
    folder: Path
    files: list[Path]


def dataset_root() -> Path:
    """Where datasets are kept: $DISPUTELAB_DATA, else the user's cache directory."""
    return data_root()


def datasets() -> list[DatasetInfo]:
    """The datasets disputelab can fetch, and whether each is fetched here."""
    found = []
    for name, d in DATASETS.items():
        try:
            here: Path | None = dataset_files(name)[0].parent
        except DatasetError:
            here = None
        found.append(DatasetInfo(name, d.description, d.url, here))
    return found


def fetch_dataset(
    name: str, source: str | None = None, to: str | os.PathLike[str] | None = None
) -> FetchedDataset:
    """Clone a dataset's public repository (or `source`, a mirror or local clone) under
    `to` (default `dataset_root()`) and lay out its case files for the importers;
    DatasetError with what to do when it cannot."""
    root = Path(to) if to is not None else None
    d = get_dataset(name)
    where = fetch_repository(name, source, root)
    return FetchedDataset(d, where, dataset_files(name, root))
