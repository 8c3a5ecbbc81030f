"""What the store hands back: episodes and scores as stored, read from their rows."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from disputelab.episode import Episode, Outcome, Status


class ScoreLike(Protocol):
    """What the store needs of a score: a value (NaN allowed), why, and the numbers behind it."""

    @property
    def value(self) -> float: ...

    @property
    def explanation(self) -> str: ...

    @property
    def detail(self) -> dict[str, Any]: ...


class PriceLike(Protocol):
    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float | None: ...


@dataclass(frozen=True)
class EpisodeRecord:
    """An episode as stored: the episode itself plus where it sits in its run."""

    episode_id: str
    run_id: str
    arm: str
    status: Status
    matched_episode_id: str | None
    episode: Episode
    scenario: dict[str, Any]
    error: str

    @property
    def complete(self) -> bool:
        return self.status not in (Status.INCOMPLETE, Status.FAILED)


@dataclass(frozen=True)
class StoredScore:
    evaluator: str
    version: str
    judge_model: str
    metric: str
    value: float
    explanation: str
    detail: dict[str, Any]


# The columns of an episode's row that `episode_header` reads, in its order.
HEADER = (
    "run_id, arm, scenario_id, condition, protocol, agents, seed, matched_episode_id, status,"
    " stop_reason, agreement, initial_consensus, error, wall_time_s, amounts"
)


def episode_header(episode_id: str, row: Sequence[Any], scenario: dict[str, Any]) -> EpisodeRecord:
    """An episode's record from its row (the `HEADER` columns), without its turns."""
    (run_id, arm, scenario_id, condition, protocol, agents, seed, matched, status) = row[:9]
    stop_reason, agreement, initial, error, wall, amounts = row[9:]
    ep = Episode(scenario_id, protocol, seed, json.loads(agents), condition)
    ep.initial_consensus = json.loads(initial) if initial else None
    ep.wall_time_s = wall or 0.0
    st = Status(status)
    if st not in (Status.INCOMPLETE, Status.FAILED):
        ep.outcome = Outcome(
            st, stop_reason, json.loads(agreement), json.loads(amounts) if amounts else {}
        )
    return EpisodeRecord(episode_id, run_id, arm, st, matched, ep, scenario, error)


def stored_score(r: Sequence[Any]) -> StoredScore:
    """A score from its row: evaluator, version, judge, metric, value, why, detail."""
    value = math.nan if r[4] is None else float(r[4])
    return StoredScore(r[0], r[1], r[2], r[3], value, r[5], json.loads(r[6]))


def run_status(complete: int, failed: int, planned: int) -> str:
    """complete: every planned episode finished; failed: the rest failed; else partial."""
    if complete >= planned:
        return "complete"
    if failed and complete + failed >= planned:
        return "failed"
    return "partial"
