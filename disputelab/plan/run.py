"""A single run, resolved once: the scenario as written, the protocol and its parameters
(under a preset), the cast, the seed, the condition, the corpus and the tracker of the
second table, every one of them checked before anything is played or recorded.

The command line's `run` and the API's `disputelab.run` both come through `plan_run`;
the episode runner reads the plan and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from disputelab.agents.registry import has_hidden_state
from disputelab.errors import PlanError, Problem
from disputelab.evaluation.trackers import LLM_TRACKERS, TRACKERS
from disputelab.plan.cast import (
    EMBEDDINGS,
    RULE,
    Cast,
    calls_endpoint,
    embeddings_model,
    embeddings_problems,
    resolve_cast,
)
from disputelab.plan.params import protocol_and_params
from disputelab.protocols.base import DisputeProtocol, ProtocolParams, retrieval_protocols
from disputelab.scenario.checks import unsettlable
from disputelab.scenario.conditions import ConditionError, apply_condition
from disputelab.scenario.io import MAX_SEED, ScenarioError
from disputelab.scenario.library import resolve_scenario
from disputelab.scenario.schema import Scenario

ORACLE = "oracle"


@dataclass(frozen=True)
class RunPlan:
    """Everything that decides one run, validated together."""

    scenario: Scenario  # as written, before the condition
    ref: str  # how it was named: a file's folder lends the expertise condition neighbours
    protocol: DisputeProtocol
    params: ProtocolParams
    cast: Cast
    seed: int = 0
    condition: str = "general"
    corpus: Path | None = None
    tracker: str | None = None  # the second table's consensus source; None: no table
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @property
    def models(self) -> tuple[str, ...]:
        """Every model the run may call, `rule` left out."""
        models = self.cast.models.items()
        return tuple(sorted({m for r, m in models if calls_endpoint(r, m)}))

    @property
    def embeddings(self) -> str | None:
        """What embeds texts for the parties (None where nothing does)."""
        return embeddings_model(self.protocol, self.params, self.cast)

    @property
    def writer(self) -> str | None:
        """The model that writes the condition, where one is given (`--model`)."""
        writer = self.cast.model("writer")
        return writer if writer != RULE else None


def plan_run(
    scenario: str | Path | Scenario,
    *,
    protocol: str | None = None,
    preset: str | None = None,
    mediator: str | None = None,
    parties: str | None = None,
    model: str = RULE,
    models: Mapping[str, str] | None = None,
    condition: str = "general",
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    budget: int | None = None,
    corpus: str | Path | None = None,
    tracker: str | None = None,
    library: Path | None = None,
) -> RunPlan:
    """Resolve a run; PlanError with every problem found when it cannot be played.

    `models` names a model per role (`parties`, `mediator`, `judge`, `mediator.when`);
    `model` plays every role it leaves out. `params` are the protocol's parameters, over
    the preset's; `budget` is the protocol's turn budget whatever it calls it (party
    turns of the roundtable, bargaining rounds of the staged protocol, ...). `scenario` is
    a built-in id, an id imported into `library`, a file, or a `Scenario`.
    """
    ref = scenario.id if isinstance(scenario, Scenario) else str(scenario)
    problems: list[Problem] = []
    models = {**(models or {})}
    if model != RULE:
        models.setdefault("writer", model)
    proto, chosen, found = protocol_and_params(protocol, preset, params or {}, budget)
    problems += found
    base = _base_scenario(scenario, library, problems)
    if not 0 <= seed <= MAX_SEED:
        problems.append(Problem(f"seed: must be from 0 to {MAX_SEED} (2^53), got {seed}"))
    if proto is None or chosen is None:
        raise PlanError("", problems)
    cast, found = resolve_cast(proto, mediator, parties, model, models)
    problems += found + [Problem(p) for p in embeddings_problems(models.get(EMBEDDINGS))]
    corpus_path = Path(corpus) if corpus is not None else None
    problems += _corpus_problems(proto, corpus_path)
    chosen_tracker: str | None = None
    if base is not None:
        problems += _scenario_problems(proto, base, condition)
        named = models.get("judge", RULE) != RULE  # a preset's tracker asks for a judge
        preset_tracker = _preset_tracker(preset) if named else None
        chosen_tracker, found = _tracker(tracker, proto, cast, base, preset_tracker)
        problems += found
    if problems or base is None:
        raise PlanError("", problems)
    warnings = tuple(f"{base.id}: {line}" for line in unsettlable(base))
    return RunPlan(
        base, ref, proto, chosen, cast, seed, condition, corpus_path, chosen_tracker, warnings
    )


def _base_scenario(
    scenario: str | Path | Scenario, library: Path | None, problems: list[Problem]
) -> Scenario | None:
    if isinstance(scenario, Scenario):
        return scenario
    try:
        return resolve_scenario(str(scenario), library)
    except ScenarioError as exc:
        problems += [Problem(f"{exc.source}: {p}") for p in exc.problems]
        return None


def _scenario_problems(proto: DisputeProtocol, base: Scenario, condition: str) -> list[Problem]:
    """The scenario as written, before a condition gives it what the protocol asks for
    (an expertise level hands any scenario a legal context), and the condition's own
    name and argument, checked offline as an experiment checks its conditions."""
    problems = []
    if (problem := proto.scenario_problem(base)) is not None:
        problems.append(Problem(problem))
    try:
        conditioned = apply_condition(base, condition)
    except ConditionError as exc:
        return [*problems, Problem(f"condition: {exc}")]
    legal = conditioned.legal
    if legal is not None and legal.retrieval_top_k and not proto.uses_retrieval:
        names = " or ".join(retrieval_protocols())
        problems.append(
            Problem(
                f"the expertise condition applies to the {names} protocol, whose mediator "
                f"proposes legal bases, and this run plays the {proto.name} protocol"
            )
        )
    return problems


def _corpus_problems(proto: DisputeProtocol, corpus: Path | None) -> list[Problem]:
    if corpus is None or proto.uses_retrieval:
        return []
    names = " or ".join(retrieval_protocols())
    return [
        Problem(
            f"corpus serves the expertise condition of the {names} protocol, and this run "
            f"plays the {proto.name} protocol"
        )
    ]


def default_tracker(proto: DisputeProtocol, cast: Cast) -> str:
    """What an experiment with this cast would read: the oracle only where every party
    exposes its true stances."""
    seat = proto.party_seat
    return ORACLE if has_hidden_state(seat.interface, cast.seat_kind(seat)) else "self-report"


def _preset_tracker(preset: str | None) -> str | None:
    if preset is None:
        return None
    from disputelab.protocols.presets import PRESETS, TRACKER

    if preset not in PRESETS:
        return None  # said by the preset's own check
    value = PRESETS.get(preset).value(TRACKER)
    return value if isinstance(value, str) else None


def _tracker(
    given: str | None,
    proto: DisputeProtocol,
    cast: Cast,
    scenario: Scenario,
    preset_default: str | None,
) -> tuple[str | None, list[Problem]]:
    """The tracker of the second table, or None when there is none to show: the oracle
    is the protocol's own table, and a case without topics (a price, a settlement's sum)
    has no consensus to follow. Unasked, it is the preset's, which applies (as in an
    experiment) only when a judge model is named, else what an experiment would read."""
    judged = cast.model("judge") != RULE
    if given is None:
        fallback = preset_default or default_tracker(proto, cast)
        tracker = fallback if scenario.topics else ORACLE
    elif given not in TRACKERS:
        return None, [Problem(f"tracker: unknown {given!r}; use {', '.join(TRACKERS)}")]
    elif given != ORACLE and not scenario.topics:
        why = f"scenario {scenario.id} has no topics whose consensus a tracker could follow"
        return None, [Problem(f"tracker {given}: {why}")]
    else:
        tracker = given
    if tracker in LLM_TRACKERS and not judged:
        return None, [Problem(f"tracker {tracker} asks a judge model", ("models.judge", "model"))]
    return (None if tracker == ORACLE else tracker), []
