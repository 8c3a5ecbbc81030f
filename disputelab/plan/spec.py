"""Experiment specs (YAML, or a mapping of the same fields), validated by pydantic, and
the grid of episodes they span.

Each cell-replicate is one episode with a deterministic id, so a resumed run finds what
is done. A mediated cell's matched unmediated episode (same scenario, condition and seed)
is planned once and shared by every mediator.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeGuard

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from disputelab.agents.registry import (
    all_sub_roles,
    has_hidden_state,
    kind_calls,
    kind_names,
    reads_behaviour,
    sub_role,
)
from disputelab.errors import DisputelabError
from disputelab.evaluation.registry import get_evaluator, on_demand_evaluators
from disputelab.evaluation.trackers import TRACKERS
from disputelab.plan.ablation import check_targets
from disputelab.plan.backbones import (
    backbone_problems,
    each_models,
    expand_model_lists,
    mediator_only,
)
from disputelab.plan.cast import EMBEDDINGS, calls_endpoint, embeddings_problems
from disputelab.plan.concurrency import LLM_CONCURRENCY, RULE_CONCURRENCY, default_concurrency
from disputelab.plan.scenario_refs import find_scenarios
from disputelab.protocols.agent_params import temperature_params
from disputelab.protocols.base import (
    DEFAULT_PROTOCOL,
    NONE,
    PROTOCOLS,
    ParamsError,
    ProtocolParams,
    get_protocol,
    mediator_kinds,
    retrieval_protocols,
)
from disputelab.protocols.presets import PRESETS, TRACKER, get_preset, with_preset
from disputelab.registry import UnknownPluginError
from disputelab.scenario.behaviour import WORLDS
from disputelab.scenario.conditions import ConditionError, apply_condition, written_problem
from disputelab.scenario.inputs import (
    MAX_FILE_BYTES,
    InputLimitError,
    UserFileError,
    read_user_file,
    yaml_problem,
)
from disputelab.scenario.io import MAX_SEED, describe_validation_error, load_yaml
from disputelab.scenario.library import builtin_scenario
from disputelab.scenario.schema import MAX_ID_CHARS, Scenario

# A scenario ref is at most a path (PATH_MAX is 4096 on Linux); a condition far shorter.
MAX_REF_CHARS = 4096
# Entries in each grid list, and episodes in a plan: SoCRATES's design is 15 conditions x
# 19 scenarios x 2 mediators x 3 replicates = 1,710 episodes. Planning a million takes
# about 2 s and a few hundred MB; a spec past that is a mistake, not an experiment.
MAX_GRID_ENTRIES = 1_000
MAX_EPISODES = 1_000_000
# The spec's lists that span the grid: an entry repeated in one is dropped, with a warning.
GRID_FIELDS = ("scenarios", "conditions", "mediators")


class SpecError(DisputelabError, ValueError):
    """A spec that cannot run; `problems` holds one line per fault."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


def model_roles() -> set[str]:
    """Every role a model may be named for: the seats of every protocol, their calls
    with a model of their own (`mediator.when`), the judge, the writer and the
    embeddings of the parties' memories."""
    seats = [(s.role, s.interface) for _, p in PROTOCOLS.items() for s in p.seats]
    named = {"judge", "writer", EMBEDDINGS}
    return {r for r, _ in seats} | named | set(all_sub_roles(seats))


def _protocol_param_names() -> set[str]:
    return {f for _, p in PROTOCOLS.items() for f in p.Params.model_fields}


def _no_yes_no(value: Any) -> Any:
    """A bool is an int to Python (and to pydantic's lax mode); as a count, it is a slip.
    So is text: `replicates: "3"` is quoted, and pydantic's lax mode would read it."""
    if isinstance(value, bool):
        raise ValueError(f"a whole number, not {str(value).lower()}")
    if isinstance(value, str | bytes):
        raise ValueError(f"a whole number, not text ({str(value)[:20]!r}); write it unquoted")
    return value


# An integer that is neither a yes/no nor text; other numbers convert as pydantic
# converts them (3.0, a NumPy integer).
Count = Annotated[int, BeforeValidator(_no_yes_no)]


class ExperimentSpec(BaseModel):
    """An experiment: scenarios x conditions x mediators x replicates under one protocol.

    The protocol's parameters go in `params`, or at the top level as shorthand
    (`budget: 40`); either way they are validated against the protocol's own model.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", max_length=MAX_ID_CHARS)
    scenarios: list[Annotated[str, Field(max_length=MAX_REF_CHARS)]] = Field(
        min_length=1,
        max_length=MAX_GRID_ENTRIES,
        description="Built-in ids, 'builtin:PATTERN' (e.g. builtin:*), ids in the store's "
        "library, importer sources ('agentmediation:PATH', 'promediate:PATH'), files or globs.",
    )
    preset: str | None = Field(
        default=None,
        description="A paper's setting (see `disputelab presets list`): its protocol and "
        "parameters, each overridden by any given explicitly.",
    )
    protocol: str = DEFAULT_PROTOCOL
    params: dict[str, Any] = Field(
        default_factory=dict, description="The protocol's parameters (see `protocols list`)."
    )
    tracker: str | None = Field(
        default=None,
        description="The consensus source of the tables: oracle, self-report, "
        "topic-localized or per-turn (default: oracle where every party has hidden state, "
        "self-report otherwise).",
    )
    conditions: list[Annotated[str, Field(max_length=MAX_REF_CHARS)]] = Field(
        default_factory=lambda: ["general"], min_length=1, max_length=MAX_GRID_ENTRIES
    )
    mediators: list[str] = Field(
        default_factory=lambda: ["rule"], min_length=1, max_length=MAX_GRID_ENTRIES
    )
    parties: str = "rule"
    models: dict[str, str] = Field(
        default_factory=dict,
        description="Model per role (parties, mediator, judge, and writer, which rewrites "
        "scenarios for LLM-written conditions), and per call where a kind offers one a model "
        "of its own (mediator.when: the generic and social mediators' when-call).",
    )
    backbones: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="The model axis: named sets of seat models (`{gpt: {mediator: A}}`), "
        "each played on every scenario, condition and seed; lists in models: name them "
        "after their models.",
    )
    # Counts and seeds take no yes/no: `replicates: true` is a slip, not one replicate.
    replicates: Count = Field(default=3, ge=1, le=10_000)
    # Episode seeds become backend seeds (x 1000 + the turn) and SQLite integers: bounded
    # so that neither overflows, and exact in JSON.
    base_seed: Count = Field(default=0, ge=0, le=MAX_SEED)
    corpus: str | None = Field(
        default=None,
        description="Statute corpus for the expertise condition (JSONL or YAML of citation and "
        "text, relative to the spec); default: the legal bases of the spec's own cases.",
    )
    evaluators: list[str] = Field(
        default_factory=list,
        description="Extra evaluators run after the episodes (the protocol's own always run).",
    )
    ablate: list[Annotated[str, Field(max_length=MAX_REF_CHARS)]] = Field(
        default_factory=list,
        max_length=MAX_GRID_ENTRIES,
        description="Run the grid again per entry with behaviour parameters at neutral: a "
        "parameter (mediator.calming), a condition (posture:competing: every parameter it "
        "acts through), or `each` (every condition of the spec that acts through any).",
    )
    worlds: list[str] | None = Field(
        default=None,
        min_length=1,
        description="Parameter worlds crossed with the grid like conditions, on the same "
        "seeds: shipped (the behaviour table as it is), neutral (every parameter at its "
        "neutral value), mirrored (every direction reversed); unset: shipped only.",
    )
    ablation_of: str | None = Field(
        default=None,
        description="Set by disputelab on the grid it runs for an `ablate:` entry: the "
        "experiment it ablates.",
    )
    ablated: str | None = Field(
        default=None, description="Set with ablation_of: the `ablate:` entry of this grid."
    )
    bert_model: str | None = Field(
        default=None,
        max_length=MAX_REF_CHARS,
        description="BERTScore model for the points-bertscore evaluator: a directory or a "
        "name in the local Hugging Face cache (bert-base-chinese for AgentMediation).",
    )
    concurrency: Count | None = Field(
        default=None,
        ge=1,
        le=1024,
        description=f"Episodes in flight; unset, {LLM_CONCURRENCY} when a role calls a model "
        f"(each endpoint's adaptive limit backs off from there), else {RULE_CONCURRENCY}.",
    )
    limit_scenarios: Count | None = Field(
        default=None, ge=1, description="Use only the first N scenarios (quick trials)."
    )
    # What validation changed and the user should hear about (a repeated grid entry
    # dropped), one line each; not a field, so a spec file cannot set it.
    _warnings: list[str] = PrivateAttr(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return list(self._warnings)

    @property
    def run_concurrency(self) -> int:
        """Episodes in flight: the spec's `concurrency:`, else the default for its models."""
        called = [m for r, m in self.models.items() if calls_endpoint(r, m)]
        return self.concurrency or default_concurrency(called)

    @model_validator(mode="before")
    @classmethod
    def _shorthand_params(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        return apply_preset(with_shorthand_params(expand_model_lists(data)))

    @model_validator(mode="after")
    def _consensus_source(self) -> ExperimentSpec:
        """The tracker the tables read, and its evaluator among the ones run after the
        episodes (the oracle's scores come with the protocol's own evaluators)."""
        if self.tracker is None:
            seat = get_protocol(self.protocol).party_seat
            hidden = has_hidden_state(seat.interface, self.parties)
            self.tracker = "oracle" if hidden else "self-report"
        if self.tracker not in TRACKERS:
            raise ValueError(f"tracker: unknown {self.tracker!r}; use {', '.join(TRACKERS)}")
        if self.tracker != "oracle" and self.tracker not in self.evaluators:
            self.evaluators = [*self.evaluators, self.tracker]
        if self.models.get("judge", "rule") != "rule":
            judged = get_protocol(self.protocol).judged_evaluators
            self.evaluators += [e for e in judged if e not in self.evaluators]
        return self

    @model_validator(mode="after")
    def _drop_repeats(self) -> ExperimentSpec:
        """A grid entry listed twice would plan the same episode ids twice: keep the first,
        and say what was dropped."""
        for field in GRID_FIELDS:
            values: list[str] = getattr(self, field)
            repeated = [v for v, n in Counter(values).items() if n > 1]
            if repeated:
                setattr(self, field, list(dict.fromkeys(values)))
                self._warnings.append(
                    f"{field}: {', '.join(repeated)} listed more than once; the repeats were "
                    "dropped, each is planned once"
                )
        return self

    @field_validator("protocol")
    @classmethod
    def _known_protocol(cls, v: str) -> str:
        get_protocol(v)  # raises with the list of protocols
        return v

    @field_validator("models")
    @classmethod
    def _known_roles(cls, v: dict[str, str]) -> dict[str, str]:
        roles = model_roles()
        bad = [r for r in v if r not in roles]
        if bad:
            raise ValueError(f"unknown role {', '.join(bad)}; use {', '.join(sorted(roles))}")
        return v

    @model_validator(mode="after")
    def _backbones_fit(self) -> ExperimentSpec:
        problems = backbone_problems(self.backbones, self.models, model_roles())
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @field_validator("mediators")
    @classmethod
    def _known_mediators(cls, v: list[str], info: ValidationInfo) -> list[str]:
        known = mediator_kinds()
        bad = [m for m in v if m not in known]
        if bad:  # kinds of no protocol: name the ones this spec's protocol takes
            try:
                seat = get_protocol(str(info.data.get("protocol"))).mediator_seat
            except UnknownPluginError:
                seat = None  # the protocol's own check names that problem
            takes = f"the {info.data['protocol']} protocol takes " if seat else "use "
            kinds = seat.kinds(hosted=False) if seat else known
            raise ValueError(f"unknown mediator {', '.join(bad)}; {takes}{', '.join(kinds)}")
        return v

    @field_validator("evaluators")
    @classmethod
    def _known_evaluators(cls, v: list[str]) -> list[str]:
        listed = on_demand_evaluators()
        bad = [e for e in v if e not in listed]
        if bad:
            raise ValueError(f"unknown evaluator {', '.join(bad)}; use {', '.join(listed)}")
        return v

    @model_validator(mode="after")
    def _params_fit_protocol(self) -> ExperimentSpec:
        try:
            params = get_protocol(self.protocol).params(self.params)
        except ParamsError as exc:
            raise ValueError(str(exc)) from None
        # A temperature left unset stays out, not at its default: a model profile may fill
        # it when the experiment runs (which then records the value sent).
        filled = temperature_params(type(params))
        given = params.model_fields_set
        self.params = {
            k: v for k, v in params.model_dump().items() if k in given or k not in filled
        }
        return self

    @model_validator(mode="after")
    def _bert_model_for_bertscore(self) -> ExperimentSpec:
        if "points-bertscore" in self.evaluators and not self.bert_model:
            raise ValueError(
                "evaluators: points-bertscore needs bert_model: NAME (bert-base-chinese for "
                "the paper's setting, or a model directory)"
            )
        return self

    @model_validator(mode="after")
    def _ablation_targets(self) -> ExperimentSpec:
        problems = ablation_problems(self.protocol, self.parties, self.ablate, self.conditions)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @model_validator(mode="after")
    def _worlds_fit(self) -> ExperimentSpec:
        if self.worlds is None:
            return self
        problems = world_problems(self.protocol, self.parties, self.worlds)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def world_axis(self) -> list[str]:
        """The worlds an episode is planned in; [''] without `worlds:` (no world in ids)."""
        return list(dict.fromkeys(self.worlds)) if self.worlds else [""]

    @model_validator(mode="after")
    def _judge_for_judged_evaluators(self) -> ExperimentSpec:
        judged = [e for e in self.evaluators if get_evaluator(e).requires_judge({})]
        if judged and self.models.get("judge", "rule") == "rule":
            raise ValueError(
                f"evaluators: {', '.join(judged)} need a judge model; add models: {{judge: MODEL}}"
            )
        return self

    @model_validator(mode="after")
    def _conditions_a_writer_can_write(self) -> ExperimentSpec:
        if self.models.get("writer", "rule") == "rule":
            return self
        problems = [p for i, c in enumerate(self.conditions) if (p := _written_problem(i, c))]
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @model_validator(mode="after")
    def _expertise_needs_retrieval(self) -> ExperimentSpec:
        proto = get_protocol(self.protocol)
        if not proto.uses_retrieval and any("expertise:" in c for c in self.conditions):
            names = " or ".join(retrieval_protocols())
            raise ValueError(
                f"conditions: expertise applies to the {names} protocol, whose mediator "
                f"proposes legal bases; set protocol: {names}"
            )
        return self

    @model_validator(mode="after")
    def _mediators_fit_protocol(self) -> ExperimentSpec:
        seat = get_protocol(self.protocol).mediator_seat
        allowed = seat.kinds(hosted=False) if seat else (NONE,)
        bad = [m for m in self.mediators if m not in allowed]
        if bad:
            raise ValueError(
                f"mediators: the {self.protocol} protocol takes {', '.join(allowed)}, "
                f"not {', '.join(bad)}"
            )
        return self

    @model_validator(mode="after")
    def _models_for_llm_roles(self) -> ExperimentSpec:
        problems: list[str] = []
        for models in each_models(self.backbones, self.models):
            problems += [p for p in self._missing_models(models) if p not in problems]
        problems += self._unused_sub_roles()
        problems += embeddings_problems(self.models.get(EMBEDDINGS))
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def _missing_models(self, models: Mapping[str, str]) -> list[str]:
        """The LLM kinds of the spec that `models` (the spec's, or one backbone's) gives
        no model."""
        proto = get_protocol(self.protocol)
        problems = []
        if proto.party_seat.needs_model(self.parties) and models.get("parties", "rule") == "rule":
            problems.append(f"parties: {self.parties} parties need models: {{parties: MODEL}}")
        seat = proto.mediator_seat
        llm = [m for m in self.mediators if seat is not None and seat.needs_model(m)]
        # The seat `mediators:` spans takes its model under its own role (`mediator` for
        # the mediated protocols, `counsel` for the settlement's method under test).
        role = seat.role if seat is not None else "mediator"
        if llm and models.get(role, "rule") == "rule":
            problems.append(f"mediators: {', '.join(llm)} need models: {{{role}: MODEL}}")
        return problems

    def _unused_sub_roles(self) -> list[str]:
        """A call's own model (`mediator.when`) that no kind in the spec's seat would ask."""
        proto = get_protocol(self.protocol)
        problems = []
        for seat in proto.seats:
            kinds = (
                self.mediators
                if seat is proto.mediator_seat
                else [self.parties if seat is proto.party_seat else seat.default_with_model]
            )
            keys = dict.fromkeys(k for m in each_models(self.backbones, self.models) for k in m)
            for key in keys:
                call = key.removeprefix(f"{seat.role}.")
                if call == key or any(call in kind_calls(seat.interface, k) for k in kinds):
                    continue
                offering = [k for k in seat.kinds() if call in kind_calls(seat.interface, k)]
                problems.append(
                    f"models: {sub_role(seat.role, call)}: no {seat.role} of this spec makes "
                    f"that call; {', '.join(offering) or 'no kind of this protocol'} does"
                )
        return problems

    @field_validator("parties")
    @classmethod
    def _known_parties(cls, v: str, info: ValidationInfo) -> str:
        # The protocol (validated first: it is declared first) says which kinds seat parties.
        try:
            interface = get_protocol(str(info.data.get("protocol"))).party_seat.interface
        except UnknownPluginError:
            return v  # the protocol's own check names the problem
        kinds = kind_names(interface, hosted=False)
        if v not in kinds:
            raise ValueError(f"unknown party kind {v!r}; use {', '.join(kinds)}")
        return v

    def protocol_params(self) -> ProtocolParams:
        return get_protocol(self.protocol).params(self.params)


@dataclass(frozen=True)
class PlannedEpisode:
    episode_id: str
    scenario_id: str
    condition: str
    mediator: str
    replicate: int
    seed: int
    baseline_id: str | None  # the matched unmediated episode, for mediated ones
    backbone: str = ""  # the models it is played with, on a spec's model axis
    world: str = ""  # the parameter world it is played in, on a spec's `worlds:` axis


def load_spec(
    path: str | Path, overrides: Mapping[str, Any] | None = None, library_dir: Path | None = None
) -> ExperimentSpec:
    """A validated spec read from a file, with `overrides` (from the command line) in
    place of its own fields; see `validate_spec`."""
    p = Path(path)
    try:
        data = load_yaml(read_user_file(p, MAX_FILE_BYTES, "an experiment spec (.yaml)"))
    except UserFileError as exc:
        raise SpecError(str(p), [exc.problem]) from None
    except InputLimitError as exc:
        raise SpecError(str(p), [str(exc)]) from None
    except yaml.YAMLError as exc:
        raise SpecError(str(p), [yaml_problem(exc, "cannot be read as YAML")]) from None
    if not isinstance(data, dict):
        raise SpecError(str(p), ["must hold a mapping of fields (name, scenarios, ...)"])
    return validate_spec(data, str(p), p.parent, overrides, library_dir)


def wrong_kind(data: Mapping[str, Any]) -> str:
    """What a mapping holds instead of an experiment spec ('' when it may be one): a
    scenario file has parties and topics or terms, and no grid."""
    if "scenarios" in data or ("name" in data and "parties" not in data):
        return ""
    if "parties" in data and ("topics" in data or "terms" in data):
        return "a scenario (it has parties and topics), not an experiment spec"
    return ""


def validate_spec(
    data: Mapping[str, Any],
    source: str = "spec",
    base: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    library_dir: Path | None = None,
) -> ExperimentSpec:
    """A validated spec from a mapping of its fields, with `overrides` in place of its
    own; `base` is what its relative paths are relative to. Every problem is reported at
    once: field errors, the protocol's parameters, the condition names and the scenario
    refs, whichever of them fail."""
    if kind := wrong_kind(data):
        raise SpecError(source, [f"holds {kind}"])
    data = {**data, **(overrides or {})}
    # A parameter given twice is said on its own line, so that the rest of the spec is
    # still checked (the model itself refuses it before any field is looked at).
    twice = _given_twice(data)
    if twice:
        data = {k: v for k, v in data.items() if k not in twice}
    problems = [_twice_problem(twice)] if twice else []
    preset = _preset_problem(data)
    if preset:
        # Which protocol the parameters belong to is unknown until the preset is fixed:
        # they are left unchecked rather than checked against the wrong one.
        unsure = {"preset", "params", *_shorthand_names()}
        data = {k: v for k, v in data.items() if k not in unsure}
        problems.append(preset)
    if not isinstance(data.get("params", {}), dict):
        # Top-level parameters join `params` once it is a mapping; until then they are
        # not fields of their own, which is all validation could say of them.
        data = {k: v for k, v in data.items() if k not in _shorthand_names()}
    try:
        spec = ExperimentSpec.model_validate(data)
        if not problems:
            return spec
    except ValidationError as exc:
        problems += describe_validation_error(exc)
    raise SpecError(source, _with_field_checks(problems, data, base or Path.cwd(), library_dir))


def _with_field_checks(
    problems: list[str], data: dict[str, Any], base: Path, library_dir: Path | None
) -> list[str]:
    """`problems` with the checks pydantic reaches only once every field is valid, each
    run on its own and said in its place."""
    extras = [
        _params_problems(data),
        _condition_problems(data.get("conditions"), data.get("models")),
        _ablate_problems(data),
        _scenario_problems(data.get("scenarios"), base, library_dir),
    ]
    for extra in extras:
        # The model's own check may have said the same at the top level already, as one
        # line of all of them: each is said on its own line in its place.
        joined = "; ".join(extra)
        top = next((t for t in (joined, f"(top level): {joined}") if t in problems), None)
        at = problems.index(top) if extra and top is not None else len(problems)
        others = problems[:at] + problems[at + 1 :]
        problems[at : at + 1] = [x for x in extra if x not in others]
    return problems


def _scenario_problems(refs: object, base: Path, library_dir: Path | None) -> list[str]:
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        return []
    if len(refs) > MAX_GRID_ENTRIES or any(len(r) > MAX_REF_CHARS for r in refs):
        return []  # validation says what is wrong with the list itself
    try:
        resolve_refs(refs, base, library_dir)
    except SpecError as exc:
        return exc.problems
    return []


def with_shorthand_params(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with its top-level protocol parameters (`budget: 40`) moved into `params`.
    A `params` that is not a mapping is left for validation to report, not replaced."""
    moved = {k: data[k] for k in data if k in _shorthand_names()}
    given = data.get("params", {})
    if not moved or not isinstance(given, dict):
        return data
    if twice := _given_twice(data):
        # Neither place is the obvious winner, so neither is chosen silently.
        raise ValueError(_twice_problem(twice))
    rest = {k: v for k, v in data.items() if k not in moved}
    return {**rest, "params": {**moved, **given}}


def _shorthand_names() -> set[str]:
    return _protocol_param_names() - set(ExperimentSpec.model_fields)


def _given_twice(data: dict[str, Any]) -> list[str]:
    """The protocol parameters `data` gives both at its top level and in `params`."""
    given = data.get("params", {})
    if not isinstance(given, dict):
        return []
    return sorted(k for k in data if k in _shorthand_names() and k in given)


def _twice_problem(twice: list[str]) -> str:
    return f"{', '.join(twice)} given both at the top level and in params; keep one"


def _preset_problem(data: dict[str, Any]) -> str:
    """What is wrong with the spec's preset (unknown, or at odds with its protocol), or ''."""
    try:
        apply_preset(with_shorthand_params(data))
    except ValueError as exc:
        return str(exc) if str(exc).startswith("preset") else f"preset: {exc}"
    return ""


def apply_preset(data: dict[str, Any]) -> dict[str, Any]:
    """`data` under its `preset:`: the preset's protocol and parameters, each parameter
    given in `data` kept; the preset's consensus source when the spec has a judge model
    and names no tracker. An unknown preset is left for validation to report."""
    name = data.get("preset")
    if not isinstance(name, str) or name not in PRESETS:
        if isinstance(name, str):
            raise ValueError(f"preset: unknown {name!r}; use {', '.join(PRESETS.names())}")
        return data
    preset = get_preset(name)
    given = data.get("params", {})
    if not isinstance(given, dict):
        return data
    protocol = data.get("protocol")
    protocol, params = with_preset(preset, protocol if isinstance(protocol, str) else None, given)
    out = {**data, "protocol": protocol, "params": params}
    models = data.get("models")
    judged = isinstance(models, dict) and models.get("judge", "rule") != "rule"
    if "tracker" not in data and judged and preset.value(TRACKER) is not None:
        out["tracker"] = preset.value(TRACKER)
    return out


def _params_problems(data: dict[str, Any]) -> list[str]:
    """The protocol's verdict on its parameters, whatever else in the spec is wrong."""
    try:
        data = apply_preset(with_shorthand_params(data))
    except ValueError:
        return []  # said by validation, once
    protocol, params = data.get("protocol", DEFAULT_PROTOCOL), data.get("params", {})
    if not isinstance(protocol, str) or protocol not in PROTOCOLS or not isinstance(params, dict):
        return []
    try:
        get_protocol(protocol).params(params)
    except ParamsError as exc:
        return exc.problems
    return []


def ablation_problems(
    protocol: str, parties: str, targets: list[str], conditions: list[str]
) -> list[str]:
    """Why the `ablate:` list cannot run: nothing to ablate for these agents at all (one
    line), or else each bad target (a structural condition, an unknown parameter)."""
    if not targets:
        return []
    if "behaviour" not in get_protocol(protocol).Params.model_fields:
        return [f"ablate: the {protocol} protocol's agents have no behaviour parameters"]
    if not reads_behaviour(get_protocol(protocol).party_seat.interface, parties):
        return [
            f"ablate: {parties} parties have no rule policy, so no behaviour parameters to "
            "set to neutral; ablation applies to parties that read the behaviour table "
            "(rule and hybrid, a settlement's or bilateral's rule kind)"
        ]
    return check_targets(targets, conditions, protocol)


def world_problems(protocol: str, parties: str, worlds: list[str]) -> list[str]:
    """Why a `worlds:` list cannot run: an unknown or repeated world, or agents with no
    behaviour table for a world to change."""
    bad = [w for w in worlds if w not in WORLDS]
    if bad:
        return [f"worlds: unknown {', '.join(map(repr, bad))}; use {', '.join(WORLDS)}"]
    if len(set(worlds)) != len(worlds):
        return ["worlds: a world listed twice; list each once"]
    if "behaviour" not in get_protocol(protocol).Params.model_fields:
        return [f"worlds: the {protocol} protocol's agents have no behaviour parameters"]
    if not reads_behaviour(get_protocol(protocol).party_seat.interface, parties):
        return [
            f"worlds: {parties} parties have no rule policy, so no behaviour parameters for "
            "a world to change; worlds apply to parties that read the behaviour table "
            "(rule and hybrid, a settlement's or bilateral's rule kind)"
        ]
    return []


def _ablate_problems(data: dict[str, Any]) -> list[str]:
    """`ablation_problems`, whatever else in the spec is wrong."""
    targets, conditions = data.get("ablate"), data.get("conditions", ["general"])
    if not _strings(targets) or not _strings(conditions):
        return []  # validation says what is wrong with the lists themselves
    try:
        data = apply_preset(with_shorthand_params(data))
    except ValueError:
        return []  # said on its own line
    protocol, parties = data.get("protocol", DEFAULT_PROTOCOL), data.get("parties", "rule")
    if not isinstance(protocol, str) or protocol not in PROTOCOLS:
        return []
    if parties not in kind_names(get_protocol(protocol).party_seat.interface):
        return []  # an unknown kind is said by its own check
    try:
        return ablation_problems(protocol, parties, targets, conditions)
    except ValueError:
        return []  # a bad condition is said by its own check


def _strings(value: object) -> TypeGuard[list[str]]:
    return (
        isinstance(value, list)
        and len(value) <= MAX_GRID_ENTRIES
        and all(isinstance(v, str) for v in value)
    )


def _condition_problems(conditions: object, models: object) -> list[str]:
    """Unknown or malformed condition names, found on a built-in scenario, and those a
    writer model (if the spec has one) could not write."""
    if not isinstance(conditions, list) or len(conditions) > MAX_GRID_ENTRIES:
        return []  # validation says what is wrong with the list itself
    written = isinstance(models, dict) and models.get("writer", "rule") != "rule"
    probe = builtin_scenario("tenancy")
    problems = []
    for i, cond in enumerate(conditions):
        if not isinstance(cond, str):
            continue
        try:
            apply_condition(probe, cond)
        except ConditionError as exc:
            problems.append(f"conditions[{i}]: {exc}")
            continue
        if written and (problem := _written_problem(i, cond)):
            problems.append(problem)
    return problems


def _written_problem(i: int, condition: str) -> str:
    """Why a writer model cannot write the spec's condition `i`, or ''."""
    problem = written_problem(condition)
    return f"conditions[{i}]: {problem}" if problem else ""


def resolve_scenarios(
    spec: ExperimentSpec, base: Path, library_dir: Path | None = None
) -> dict[str, Scenario]:
    """The spec's scenarios, the first `limit_scenarios` of them if it sets a limit."""
    return limit_scenarios(spec, resolve_pool(spec, base, library_dir))


def resolve_pool(
    spec: ExperimentSpec, base: Path, library_dir: Path | None = None
) -> dict[str, Scenario]:
    """Every scenario the spec names that its protocol can play, before any
    `limit_scenarios`. A trial on a few cases still retrieves legal bases from this whole
    pool, so that its cells see the same corpus as the full run's."""
    return _playable(spec, resolve_refs(spec.scenarios, base, library_dir))


def limit_scenarios(spec: ExperimentSpec, found: dict[str, Scenario]) -> dict[str, Scenario]:
    """The first `limit_scenarios` of `found`, or all of them when the spec sets no limit."""
    if spec.limit_scenarios is None:
        return found
    return dict(list(found.items())[: spec.limit_scenarios])


def _playable(spec: ExperimentSpec, found: dict[str, Scenario]) -> dict[str, Scenario]:
    """The scenarios the spec's protocol can play: a `builtin:` pattern passes over the
    built-ins it cannot (the price-only ones under a topic protocol, say); a scenario
    named in any other way that it cannot play is a problem."""
    proto = get_protocol(spec.protocol)
    patterns = [r.removeprefix("builtin:") for r in spec.scenarios if r.startswith("builtin:")]
    named = set(spec.scenarios)
    keep: dict[str, Scenario] = {}
    problems = []
    for sid, s in found.items():
        problem = proto.scenario_problem(s)
        if problem is None:
            keep[sid] = s
        elif sid in named or not any(fnmatch.fnmatch(sid, p) for p in patterns):
            problems.append(f"scenarios: {sid}: {problem}")
    if problems:
        raise SpecError("spec", problems)
    return keep


def resolve_refs(
    refs: list[str], base: Path, library_dir: Path | None = None
) -> dict[str, Scenario]:
    """Scenario refs -> scenarios (see `find_scenarios`); every problem is reported at
    once, as a SpecError."""
    found = find_scenarios(refs, base, library_dir)
    if found.problems:
        raise SpecError("spec", found.problems)
    return found.scenarios


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


def grid_episodes(spec: ExperimentSpec, scenario_ids: list[str]) -> list[PlannedEpisode]:
    """Every episode of the grid in a stable order; where the protocol plays twins, each
    cell's unmediated twin comes first and is shared by every mediator of the cell (and
    by every backbone, when backbones differ in the mediator's models only). Each
    episode id is planned once: validation drops repeated grid entries (and says so), and
    repeats that reach here any other way are skipped."""
    mediators = list(dict.fromkeys(spec.mediators))
    sids, conditions = list(dict.fromkeys(scenario_ids)), list(dict.fromkeys(spec.conditions))
    worlds = spec.world_axis
    total = len(sids) * len(conditions) * spec.replicates * _per_cell(spec, mediators)
    total *= len(worlds)
    if total > MAX_EPISODES:
        raise SpecError(
            "spec",
            [
                f"the grid has {total:,} episodes, more than {MAX_EPISODES:,}; "
                "split it into smaller experiments"
            ],
        )
    episodes: list[PlannedEpisode] = []
    for sid in sids:
        for cond in conditions:
            for r in range(spec.replicates):
                for world in worlds:
                    episodes += _cell_episodes(spec, sid, cond, r, mediators, world)
    return episodes


def _per_cell(spec: ExperimentSpec, mediators: list[str]) -> int:
    """Episodes per scenario, condition and replicate."""
    twins = get_protocol(spec.protocol).plays_twin
    n_backbones = max(1, len(spec.backbones))
    mediated = sum(m != NONE for m in mediators) if twins else len(mediators)
    if not twins:
        return mediated * n_backbones
    shared = not spec.backbones or _shared_twin(spec)
    return (1 if shared else n_backbones) + mediated * n_backbones


def _shared_twin(spec: ExperimentSpec) -> bool:
    seat = get_protocol(spec.protocol).mediator_seat
    return mediator_only(spec.backbones, seat.role if seat is not None else "mediator")


def _cell_episodes(
    spec: ExperimentSpec, sid: str, cond: str, r: int, mediators: list[str], world: str = ""
) -> list[PlannedEpisode]:
    """One scenario, condition, replicate and world: every mediator under every backbone,
    after the unmediated twins they are scored against. The world, when the spec has a
    `worlds:` axis, ends the mediator's part of the id (`rule~mirrored`), so that every
    world plays the same seeds and the tables pair a world's cells with its own
    reference; twins are per world, since a world changes the unmediated parties too."""
    twins = get_protocol(spec.protocol).plays_twin
    seed = spec.base_seed + r
    prefix = f"{spec.name}/{sid}/{cond}"
    w = f"~{world}" if world else ""
    out: list[PlannedEpisode] = []
    backbones = list(spec.backbones) or [""]
    shared = twins and (not spec.backbones or _shared_twin(spec))
    if shared:
        twin_id = f"{prefix}/{NONE}{w}/r{r}"
        out.append(PlannedEpisode(twin_id, sid, cond, NONE, r, seed, None, "", world))
    for b in backbones:
        at = f"@{b}" if b else ""
        base_id = None
        if twins:
            base_id = f"{prefix}/{NONE}{'' if shared else at}{w}/r{r}"
            if not shared:
                out.append(PlannedEpisode(base_id, sid, cond, NONE, r, seed, None, b, world))
        out += [
            PlannedEpisode(
                f"{prefix}/{med}{at}{w}/r{r}", sid, cond, med, r, seed, base_id, b, world
            )
            for med in mediators
            if not (twins and med == NONE)
        ]
    return out
