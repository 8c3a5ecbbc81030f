"""Re-score stored episodes with any registered evaluator. Judge validation lives in
`disputelab.experiments.validation`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from disputelab.episode import Usage
from disputelab.errors import Problem
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.registry import EpisodeToScore, ScoringContext, get_evaluator
from disputelab.llm.models import ModelHub
from disputelab.scenario.io import describe_validation_error
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import EpisodeRecord, Store

__all__ = ["evaluate_run", "evaluation_problems", "scoring_options"]


def scoring_options(
    tracker: str = "self-report", rouge: str = "char", bert_model: str = ""
) -> dict[str, str]:
    """The options an evaluator scores (and is stored) under in a pass over a run."""
    return {"tracker": tracker, "rouge": rouge, "bert_model": bert_model}


def evaluation_problems(
    evaluator: str, judges: Sequence[str], tracker: str, rouge: str, bert_model: str
) -> list[Problem]:
    """Why a pass of `evaluator` over a run cannot start: an unknown name, a judge it
    needs and was not given, or something it needs that is not here."""
    from disputelab.evaluation.outcomes import ROUGE_STYLES
    from disputelab.evaluation.registry import on_demand_evaluators
    from disputelab.evaluation.trackers import TRACKERS

    problems: list[Problem] = []
    listed = on_demand_evaluators()
    if evaluator not in listed:
        problems.append(Problem(f"unknown evaluator {evaluator!r}; available: {', '.join(listed)}"))
    if tracker not in TRACKERS:
        problems.append(Problem(f"unknown tracker {tracker!r}; available: {', '.join(TRACKERS)}"))
    if rouge not in ROUGE_STYLES:
        styles = ", ".join(ROUGE_STYLES)
        problems.append(Problem(f"unknown ROUGE-L style {rouge!r}; available: {styles}"))
    if problems:
        return problems
    ev = get_evaluator(evaluator)
    options = scoring_options(tracker, rouge, bert_model)
    if ev.requires_judge(options) and not judges:
        return [Problem(f"evaluator {evaluator!r} needs a judge", ("judges",))]
    why = ev.unavailable(options) if ev.unavailable is not None else None
    return [Problem(f"evaluator {evaluator!r} {why}")] if why else []


def _to_score(rec: EpisodeRecord, by_id: Mapping[str, EpisodeRecord]) -> EpisodeToScore:
    twin = by_id.get(rec.matched_episode_id or "")
    try:
        scenario = Scenario.model_validate(rec.scenario)
    except ValidationError as exc:  # it validated when the episode was played
        problems = describe_validation_error(exc)
        raise ValueError(
            f"episode {rec.episode_id}: its stored scenario does not validate ({problems[0]}"
            f"{f', and {len(problems) - 1} more' if len(problems) > 1 else ''}); the store "
            "may be damaged: see `disputelab store check`"
        ) from None
    return EpisodeToScore(
        rec.episode,
        scenario,
        twin.episode if twin is not None else None,
        rec.episode_id,
        twin.episode_id if twin is not None else None,
    )


async def evaluate_run(
    store: Store,
    run_id: str,
    evaluator: str,
    hub: ModelHub,
    judge_models: Sequence[str],
    tracker: str = "self-report",
    progress: Callable[[int, int], None] | None = None,
    rouge: str = "char",
    bert_model: str = "",
) -> dict[str, dict[str, MetricResult]]:
    """Score every complete episode of a run again; stores scores beside the old ones,
    versioned by evaluator, rubric version and judge model."""
    ev = get_evaluator(evaluator)
    options = scoring_options(tracker, rouge, bert_model)
    ctx = ScoringContext([hub.model(m, "judge") for m in judge_models], options)
    judge_name = ",".join(judge_models)
    records = [store.load_episode(e) for e in store.episode_ids(run_id)]
    complete = {r.episode_id: r for r in records if r.complete}
    results: dict[str, dict[str, MetricResult]] = {}
    role = f"judge:{ev.name}"  # judge calls are charged per evaluator, beside the episode's
    for rec in complete.values():
        before = _spent(hub, "judge")
        scores = await ev.score(_to_score(rec, complete), ctx)
        store.add_scores(
            rec.episode_id, ev.stored_name(ctx.options), ev.version, scores, judge_name
        )
        calls = _spent(hub, "judge") - before
        if calls.usage.calls:
            store.record_usage(rec.episode_id, {role: (judge_name, calls.usage, calls)})
        results[rec.episode_id] = scores
        if progress is not None:
            progress(len(results), len(complete))
    return results


@dataclass(frozen=True)
class _Spent:
    """Judge usage so far (or between two readings), with its cost already known."""

    usage: Usage
    cost_usd: float | None

    def __sub__(self, earlier: _Spent) -> _Spent:
        u, e = self.usage, earlier.usage
        cost = (
            None
            if self.cost_usd is None or earlier.cost_usd is None
            else (self.cost_usd - earlier.cost_usd)
        )
        return _Spent(
            Usage(
                u.calls - e.calls,
                u.input_tokens - e.input_tokens,
                u.output_tokens - e.output_tokens,
            ),
            cost,
        )

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float | None:
        return self.cost_usd


def _spent(hub: ModelHub, role: str) -> _Spent:
    r = hub.ledger.roles.get(role)
    if r is None:
        return _Spent(Usage(), 0.0)
    return _Spent(Usage(r.calls, r.input_tokens, r.output_tokens), r.cost_usd)
