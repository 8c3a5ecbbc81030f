"""`run --tracker`: a single run's consensus read by a tracker, as an experiment's tables
read it. The protocol's own table reads the oracle, which LLM parties do not have, so
without this a run with LLM parties shows no consensus at all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from disputelab.agents.registry import has_hidden_state
from disputelab.cli.common import fail, metrics_table, out, print_undefined
from disputelab.evaluation.trackers import LLM_TRACKERS, TRACKERS
from disputelab.protocols.base import DisputeProtocol

if TYPE_CHECKING:
    from disputelab.evaluation.metrics import MetricResult
    from disputelab.experiments.episodes import Cast, RunResult
    from disputelab.llm.models import ModelHub
    from disputelab.scenario.schema import Scenario
    from disputelab.store.sqlite import Store

ORACLE = "oracle"

TRACKER_HELP = (
    f"Consensus source of a second metrics table: {', '.join(t for t in TRACKERS if t != ORACLE)}"
    f" ({' and '.join(LLM_TRACKERS)} ask the judge model: --judge-model or --model); "
    f"{ORACLE} is the protocol's own table. Default: a preset's, with --judge-model; else "
    f"self-report where some party has no hidden state and the case has topics."
)


def default_tracker(proto: DisputeProtocol, cast: Cast) -> str:
    """What an experiment with this cast would read: the oracle only where every party
    exposes its true stances."""
    seat = proto.party_seat
    return ORACLE if has_hidden_state(seat.interface, cast.seat_kind(seat)) else "self-report"


def preset_tracker(preset: str | None, judge_model: str | None) -> str | None:
    """A paper preset's consensus source, which applies, as in an experiment, only when a
    judge model is named (socrates: topic-localized; promediate: per-turn)."""
    if preset is None or judge_model in (None, "rule"):
        return None
    from disputelab.protocols.presets import TRACKER, get_preset

    value = get_preset(preset).value(TRACKER)
    return value if isinstance(value, str) else None


def chosen_tracker(
    given: str | None,
    proto: DisputeProtocol,
    cast: Cast,
    scenario: Scenario,
    preset_default: str | None = None,
) -> str | None:
    """The tracker of the second table, or None when there is none to show: the oracle
    is the protocol's own table, and a case without topics (a price, a settlement's sum)
    has no consensus to follow. Unasked, it is the preset's (`preset_default`), else
    what an experiment would read. A bad name, a tracker asked of such a case, or an LLM
    tracker with no judge stops the run before anything is played or recorded."""
    if given is None:
        fallback = preset_default or default_tracker(proto, cast)
        tracker = fallback if scenario.topics else ORACLE
    elif given not in TRACKERS:
        fail(f"--tracker: unknown {given!r}; use {', '.join(TRACKERS)}")
    elif given != ORACLE and not scenario.topics:
        fail(
            f"--tracker {given}: scenario {scenario.id} has no topics whose consensus a "
            "tracker could follow"
        )
    else:
        tracker = given
    if tracker in LLM_TRACKERS and cast.model("judge") == "rule":
        fail(f"--tracker {tracker} asks a judge model: pass --judge-model or --model")
    return None if tracker == ORACLE else tracker


async def track(
    store: Store, result: RunResult, tracker: str, hub: ModelHub, cast: Cast
) -> dict[str, dict[str, MetricResult]]:
    """Score the run's episodes with the tracker's evaluator; stored like `evaluate`'s."""
    from disputelab.experiments.judging import evaluate_run

    judge = cast.model("judge")
    judges = [judge] if tracker in LLM_TRACKERS else []
    return await evaluate_run(store, result.run_id, tracker, hub, judges, tracker)


def print_tracked(
    tracked: dict[str, dict[str, MetricResult]],
    result: RunResult,
    tracker: str | None,
    label: str,
) -> None:
    """The tracker's scores in the columns of the protocol's table (none without one),
    the episode's under `label`, as that table heads it."""
    if tracker is None:
        return
    columns: dict[str, dict[str, MetricResult]] = {}
    if result.baseline_id is not None and result.baseline_id in tracked:
        columns["unmediated"] = tracked[result.baseline_id]
    if result.episode_id in tracked:
        columns[label] = tracked[result.episode_id]
    if not columns:  # nothing complete to score: the run's own table has said why
        return
    out.print(metrics_table(f"consensus ({tracker} tracker)", columns))
    print_undefined(columns if len(columns) > 1 else {"": next(iter(columns.values()))})


TrackerOption = Annotated[str | None, typer.Option(help=TRACKER_HELP)]
