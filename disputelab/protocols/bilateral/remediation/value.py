"""Value impact (Eqs. 1 and 3): how much an exemplar set raises the reward over a
zero-shot remediation, averaged over synthetic dialogues with one remediation point.

D_s: synthetic tasks played with at most one violation each, kept when the violation
came before the end. Both arms of a dialogue share its task and seed, so they are the same
dialogue up to the remediation point (common random numbers) and the zero-shot arm's
reward is computed once and reused for every set valued.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from disputelab.episode import Episode
from disputelab.evaluation.registry import EpisodeToScore, ScoringContext
from disputelab.llm.base import ChatModel
from disputelab.llm.concurrency import each
from disputelab.protocols.bilateral.agents.exemplars import Exemplar
from disputelab.protocols.bilateral.evaluation import score
from disputelab.protocols.bilateral.remediation.simulate import Cast, Method, exactly, play_once
from disputelab.protocols.bilateral.remediation.tasks import tasks
from disputelab.scenario.schema import Scenario

ONE_POINT = {"single_violation": True}


async def episode_reward(
    episode: Episode, scenario: Scenario, judges: Sequence[ChatModel] = ()
) -> float:
    """R of an episode (NaN when its relational terms cannot be had)."""
    scores = await score(EpisodeToScore(episode, scenario), ScoringContext(judges))
    return scores["reward"].value


def has_remediation_point(episode: Episode) -> bool:
    return any("violation:" in t.stage for t in episode.turns)


@dataclass
class Rollouts:
    """D_s with the zero-shot arm's reward of each dialogue."""

    items: list[tuple[Scenario, int]] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    screened: int = 0  # dialogues played to find them


async def build_rollouts(
    n: int, seed: int, cast: Cast, judges: Sequence[ChatModel] = (), per_topic: int = 8
) -> Rollouts:
    """`n` dialogues with a remediation point, on tasks and seeds drawn from `seed`."""
    out = Rollouts()
    scenarios = tasks(per_topic, start=1000 + 100 * seed)
    s = seed * 1_000_003 + 7
    while len(out.items) < n and out.screened < 50 * max(1, n):
        scenario = scenarios[out.screened % len(scenarios)]
        s += 1
        out.screened += 1
        episode = await play_once(scenario, s, exactly(()), cast, ONE_POINT)
        if has_remediation_point(episode):
            out.items.append((scenario, s))
            out.baseline.append(await episode_reward(episode, scenario, judges))
    return out


class ValueImpact:
    """The value impact of exemplar sets named by id, over fixed rollouts."""

    def __init__(
        self,
        pool: Sequence[Exemplar],
        rollouts: Rollouts,
        cast: Cast,
        judges: Sequence[ChatModel] = (),
    ) -> None:
        self.by_id = {e.id: e for e in pool}
        self.rollouts = rollouts
        self.cast = cast
        self.judges = judges
        self.episodes = 0

    async def __call__(self, ids: tuple[str, ...]) -> float:
        arm: Method = exactly([self.by_id[i] for i in ids])

        async def reward(item: tuple[Scenario, int]) -> float:
            scenario, seed = item
            episode = await play_once(scenario, seed, arm, self.cast, ONE_POINT)
            self.episodes += 1
            return await episode_reward(episode, scenario, self.judges)

        # The rollouts are episodes of their own, each seeded apart: they are played
        # together, and their gains summed in the rollouts' order.
        rewards = await each(reward, self.rollouts.items)
        gains = [
            r - base
            for r, base in zip(rewards, self.rollouts.baseline, strict=True)
            if not (math.isnan(r) or math.isnan(base))
        ]
        return sum(gains) / len(gains) if gains else math.nan
