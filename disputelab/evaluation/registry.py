"""Evaluators by name: each scores one complete episode and returns metrics with reasons.

An evaluator has a name, a version (stored with every score, so a changed rubric never
mixes with old scores), whether it needs a judge model, and one `score` entry point. A
judge that fails gives NaN with the reason, never a silent zero. Protocols name their
own evaluators; `disputelab evaluate` and a spec's `evaluators:` run any listed one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from disputelab.episode import Episode
from disputelab.evaluation.metrics import MetricResult
from disputelab.llm.base import ChatModel
from disputelab.registry import Registry
from disputelab.scenario.schema import Scenario


@dataclass(frozen=True)
class EpisodeToScore:
    """A complete episode, its scenario, and its matched unmediated twin if it has one."""

    episode: Episode
    scenario: Scenario
    baseline: Episode | None = None
    episode_id: str = ""
    baseline_id: str | None = None


@dataclass
class ScoringContext:
    """What a scoring pass shares across episodes: judges, options, and a memo so that a
    twin scored once (a tracker's trajectory, say) is not judged again."""

    judges: Sequence[ChatModel] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    memo: dict[Any, Any] = field(default_factory=dict)


Scorer = Callable[[EpisodeToScore, ScoringContext], Awaitable[dict[str, MetricResult]]]
S = TypeVar("S", bound=Scorer)


@dataclass(frozen=True)
class Evaluator:
    name: str
    version: str
    description: str
    score: Scorer
    needs_judge: bool = False
    # Listed for `disputelab evaluate` and spec `evaluators:`; protocol-only scorers
    # (which need what a protocol guarantees, such as a twin) are not.
    on_demand: bool = True
    # Option that decides whether a judge is needed: (option, values needing one).
    judged_when: tuple[str, tuple[str, ...]] | None = None
    # The store's evaluator column; `{option}` placeholders are filled from the options.
    stored_as: str = ""
    # Slow set-up (imports, tokeniser dictionaries) to do once before episodes are scored
    # on the event loop, where it would stall every episode in flight.
    warm_up: Callable[[], None] | None = None
    # Scoring that takes long (a neural model) and so, as an experiment's extra
    # evaluator, runs in one pass after the episodes rather than as each one finishes.
    after_run: bool = False
    # Scores without a judge, but asks one when a judge is given (some metrics are then
    # judged rather than counted).
    judge_optional: bool = False
    # Why it cannot run with these options here (a model not named, a library not
    # installed), or None: asked before a pass over a run starts.
    unavailable: Callable[[Mapping[str, str]], str | None] | None = None

    def requires_judge(self, options: Mapping[str, str]) -> bool:
        if self.needs_judge:
            return True
        if self.judged_when is None:
            return False
        option, values = self.judged_when
        return options.get(option, "") in values

    def stored_name(self, options: Mapping[str, str]) -> str:
        name = self.stored_as or self.name
        return name.format(**options) if "{" in name else name


EVALUATORS: Registry[Evaluator] = Registry("evaluator")


def register_evaluator(evaluator: Evaluator) -> Evaluator:
    return EVALUATORS.register(evaluator.name, evaluator)


def evaluator(name: str, version: str, description: str, **options: Any) -> Callable[[S], S]:
    """Register the decorated scorer as the evaluator `name`; `options` are the other
    fields of `Evaluator` (needs_judge, on_demand, stored_as, ...)."""

    def register(score: S) -> S:
        register_evaluator(Evaluator(name, version, description, score, **options))
        return score

    return register


def get_evaluator(name: str) -> Evaluator:
    return EVALUATORS.get(name)


def on_demand_evaluators() -> tuple[str, ...]:
    return tuple(n for n, e in EVALUATORS.items() if e.on_demand)


def warm_up(names: Sequence[str]) -> None:
    """Do the named evaluators' slow set-up now (run it in a thread from async code)."""
    for name in dict.fromkeys(names):
        hook = get_evaluator(name).warm_up
        if hook is not None:
            hook()
