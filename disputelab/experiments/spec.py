"""Experiment specs (YAML), validated by pydantic, and their expansion into episodes.

Each cell-replicate is one episode with a deterministic id, so a resumed run finds what
is done. A mediated cell's matched unmediated episode (same scenario, condition and seed)
is planned once and shared by every mediator.
"""

from __future__ import annotations

import fnmatch
import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from disputelab.agents.registry import (
    LLM_MEDIATORS,
    MEDIATOR_KINDS,
    PARTY_KINDS,
    PROTOCOL_MEDIATORS,
)
from disputelab.scenario.conditions import apply_condition
from disputelab.scenario.io import ScenarioError, describe_validation_error
from disputelab.scenario.library import builtin_scenarios, resolve_scenario
from disputelab.scenario.schema import Scenario

# Evaluators an experiment can add after its episodes (`disputelab evaluate` runs the same);
# the protocol's own scores always run. Those in NEEDS_JUDGE need `models: {judge: ...}`.
EXTRA_EVALUATORS = (
    "oracle",
    "self-report",
    "topic-localized",
    "per-turn",
    "promediate",
    "outcome-judges",
    "mediator-intelligence",
)
NEEDS_JUDGE = ("topic-localized", "per-turn", "outcome-judges", "mediator-intelligence")


class SpecError(ValueError):
    """A spec that cannot run; `problems` holds one line per fault."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


class ExperimentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    scenarios: list[str] = Field(
        min_length=1,
        description="Built-in ids, 'builtin:PATTERN' (e.g. builtin:*), ids in the store's "
        "library, importer sources ('agentmediation:PATH', 'promediate:PATH'), files or globs.",
    )
    protocol: Literal["roundtable", "staged"] = "roundtable"
    conditions: list[str] = Field(default_factory=lambda: ["general"], min_length=1)
    mediators: list[str] = Field(default_factory=lambda: ["rule"], min_length=1)
    parties: str = "rule"
    models: dict[Literal["parties", "mediator", "judge", "writer"], str] = Field(
        default_factory=dict,
        description="Model per role; 'writer' rewrites scenarios for LLM-written conditions.",
    )
    replicates: int = Field(default=3, ge=1, le=10_000)
    base_seed: int = 0
    budget: int = Field(default=100, ge=1, le=10_000, description="Roundtable party turns.")
    rounds: int = Field(default=5, ge=0, le=100, description="Staged bargaining rounds.")
    corpus: str | None = Field(
        default=None,
        description="Statute corpus for the expertise condition (JSONL or YAML of citation and "
        "text, relative to the spec); default: the legal bases of the spec's own cases.",
    )
    evaluators: list[str] = Field(
        default_factory=list,
        description="Extra evaluators run after the episodes (the protocol's own always run).",
    )
    concurrency: int = Field(default=4, ge=1, le=1024)

    @field_validator("mediators")
    @classmethod
    def _known_mediators(cls, v: list[str]) -> list[str]:
        bad = [m for m in v if m not in MEDIATOR_KINDS]
        if bad:
            raise ValueError(f"unknown mediator {', '.join(bad)}; use {', '.join(MEDIATOR_KINDS)}")
        return v

    @field_validator("evaluators")
    @classmethod
    def _known_evaluators(cls, v: list[str]) -> list[str]:
        bad = [e for e in v if e not in EXTRA_EVALUATORS]
        if bad:
            raise ValueError(
                f"unknown evaluator {', '.join(bad)}; use {', '.join(EXTRA_EVALUATORS)}"
            )
        return v

    @model_validator(mode="after")
    def _judge_for_judged_evaluators(self) -> ExperimentSpec:
        judged = [e for e in self.evaluators if e in NEEDS_JUDGE]
        if judged and self.models.get("judge", "rule") == "rule":
            raise ValueError(
                f"evaluators: {', '.join(judged)} need a judge model; add models: {{judge: MODEL}}"
            )
        return self

    @model_validator(mode="after")
    def _expertise_needs_staged(self) -> ExperimentSpec:
        if self.protocol != "staged" and any("expertise:" in c for c in self.conditions):
            raise ValueError(
                "conditions: expertise applies to the staged protocol, whose mediator "
                "proposes legal bases; set protocol: staged"
            )
        return self

    @model_validator(mode="after")
    def _mediators_fit_protocol(self) -> ExperimentSpec:
        allowed = PROTOCOL_MEDIATORS[self.protocol]
        bad = [m for m in self.mediators if m not in allowed]
        if bad:
            raise ValueError(
                f"mediators: the {self.protocol} protocol takes {', '.join(allowed)}, "
                f"not {', '.join(bad)}"
            )
        return self

    @model_validator(mode="after")
    def _models_for_llm_roles(self) -> ExperimentSpec:
        problems = []
        if self.parties != "rule" and self.models.get("parties", "rule") == "rule":
            problems.append(f"parties: {self.parties} parties need models: {{parties: MODEL}}")
        llm = [m for m in self.mediators if m in LLM_MEDIATORS]
        if llm and self.models.get("mediator", "rule") == "rule":
            problems.append(f"mediators: {', '.join(llm)} need models: {{mediator: MODEL}}")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @field_validator("parties")
    @classmethod
    def _known_parties(cls, v: str) -> str:
        if v not in PARTY_KINDS:
            raise ValueError(f"unknown party kind {v!r}; use {', '.join(PARTY_KINDS)}")
        return v


@dataclass(frozen=True)
class PlannedEpisode:
    episode_id: str
    scenario_id: str
    condition: str
    mediator: str
    replicate: int
    seed: int
    baseline_id: str | None  # the matched unmediated episode, for mediated ones


def load_spec(path: str | Path) -> ExperimentSpec:
    p = Path(path)
    if not p.exists():
        raise SpecError(str(p), ["no such file; check the path"])
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SpecError(str(p), [f"cannot be read as YAML: {exc}".splitlines()[0]]) from None
    if not isinstance(data, dict):
        raise SpecError(str(p), ["must hold a mapping of fields (name, scenarios, ...)"])
    try:
        return ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(str(p), describe_validation_error(exc)) from None


IMPORT_SOURCES = ("agentmediation", "promediate")


def resolve_scenarios(
    spec: ExperimentSpec, base: Path, library_dir: Path | None = None
) -> dict[str, Scenario]:
    """Scenario refs -> scenarios: built-in ids, `builtin:PATTERN`, ids imported into the
    store's library, importer sources (`agentmediation:PATH`, `promediate:PATH`), then
    files and globs (relative to the spec's folder). Every problem is reported at once."""
    out: dict[str, Scenario] = {}
    problems: list[str] = []
    builtins = builtin_scenarios()
    where: dict[str, str] = {}  # scenario id -> where it came from

    def add(i: int, origin: str, found: list[Scenario]) -> None:
        for s in found:
            if s.id in out and out[s.id] == s:
                continue  # the same scenario named twice is harmless
            if s.id in where:
                problems.append(
                    f"scenarios[{i}]: scenario id {s.id} also comes from {where[s.id]}; "
                    "ids must be unique across an experiment"
                )
                continue
            where[s.id] = origin
            out[s.id] = s

    case_files = [
        path
        for ref in spec.scenarios
        if ref.startswith("agentmediation:")
        for path in _paths(ref.partition(":")[2], base)
    ]
    many = len(set(case_files)) > 1  # then ids carry the file's name, as on import
    for i, ref in enumerate(spec.scenarios):
        if ref in builtins:
            add(i, ref, [resolve_scenario(ref)])
            continue
        if ref.startswith("builtin:"):
            matched = fnmatch.filter(sorted(builtins), ref.removeprefix("builtin:"))
            if not matched:
                problems.append(f"scenarios[{i}]: {ref} matches no built-in scenario")
            add(i, ref, [builtins[sid] for sid in matched])
            continue
        if library_dir is not None and (library_dir / f"{ref}.yaml").is_file():
            add(i, ref, [resolve_scenario(ref, library_dir)])
            continue
        source, sep, rest = ref.partition(":")
        if sep and source in IMPORT_SOURCES:
            for path in _paths(rest, base):
                found, bad = import_source(source, path, many)
                add(i, path, found)
                problems += [f"scenarios[{i}]: {b}" for b in bad]
            continue
        for path in _paths(ref, base):
            try:
                s = resolve_scenario(path)
            except ScenarioError as exc:
                problems += [f"scenarios[{i}]: {exc.source}: {x}" for x in exc.problems]
                continue
            add(i, path, [s])
    if problems:
        raise SpecError("spec", problems)
    return out


def _paths(ref: str, base: Path) -> list[str]:
    pattern = ref if Path(ref).is_absolute() else str(base / ref)
    return sorted(glob.glob(pattern)) or [pattern]


def import_source(source: str, path: str, many: bool = False) -> tuple[list[Scenario], list[str]]:
    """Scenarios from an importer's file, and one line per record that could not be read.
    With `many` case files in play, AgentMediation ids carry the file's name."""
    if not Path(path).is_file():
        return [], [f"{source}:{path}: no such file"]
    if source == "agentmediation":
        from disputelab.scenario.importers.agentmediation import (
            AgentMediationError,
            id_prefix,
            import_agentmediation,
        )

        try:
            result = import_agentmediation(Path(path), id_prefix(Path(path), many))
        except AgentMediationError as exc:
            return [], [str(exc)]
        return result.scenarios, [f"{path}:{line}: {why}" for line, why in result.problems]
    from disputelab.scenario.importers.promediate import import_promediate_file

    try:
        return [import_promediate_file(Path(path)).scenario], []
    except (OSError, ValueError) as exc:
        return [], [f"{path}: {str(exc).splitlines()[0]}"]


def check_conditions(spec: ExperimentSpec, scenarios: dict[str, Scenario]) -> None:
    problems = []
    any_scenario = next(iter(scenarios.values()))
    for i, cond in enumerate(spec.conditions):
        try:
            apply_condition(any_scenario, cond)
        except ValueError as exc:
            problems.append(f"conditions[{i}]: {exc}")
    if problems:
        raise SpecError("spec", problems)


def plan(spec: ExperimentSpec, scenario_ids: list[str]) -> list[PlannedEpisode]:
    """Every episode of the grid, unmediated twins first, in a stable order.

    Staged episodes have no twins: their metrics (success, satisfaction, solution quality)
    are read off the episode itself.
    """
    episodes: list[PlannedEpisode] = []
    for sid in scenario_ids:
        for cond in spec.conditions:
            for r in range(spec.replicates):
                seed = spec.base_seed + r
                if spec.protocol == "staged":
                    episodes += [
                        PlannedEpisode(
                            f"{spec.name}/{sid}/{cond}/{med}/r{r}", sid, cond, med, r, seed, None
                        )
                        for med in spec.mediators
                    ]
                    continue
                base_id = f"{spec.name}/{sid}/{cond}/none/r{r}"
                episodes.append(PlannedEpisode(base_id, sid, cond, "none", r, seed, None))
                for med in spec.mediators:
                    if med == "none":
                        continue
                    episodes.append(
                        PlannedEpisode(
                            f"{spec.name}/{sid}/{cond}/{med}/r{r}", sid, cond, med, r, seed, base_id
                        )
                    )
    return episodes
