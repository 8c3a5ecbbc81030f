"""The candidate pool D: violating turns of simulated dialogues, each with a silver
remediation written without exemplars.

Dialogues are played without a remediator at the paper's violation rate; every labelled
violation becomes a candidate `(history, violation, silver fix)`. With a model, the
silver fix is the model's zero-shot rewrite (the paper's annotator). Offline it is a
template rewrite in a style drawn from `SILVER_STYLE_WEIGHTS`: zero-shot annotations
vary in quality, and that variation is what selection can exploit (an assumption).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.episode import Episode, Turn
from disputelab.llm.base import ChatModel
from disputelab.llm.concurrency import each
from disputelab.protocols.bilateral.agents.exemplars import (
    SILVER_STYLE_WEIGHTS,
    STYLES,
    Exemplar,
    ExemplarFile,
)
from disputelab.protocols.bilateral.agents.market import Market
from disputelab.protocols.bilateral.agents.remediators import LLMRemediator, template_rewrite
from disputelab.protocols.bilateral.remediation.simulate import Cast, Method, play_once
from disputelab.protocols.bilateral.remediation.tasks import tasks
from disputelab.scenario.schema import Scenario

VIOLATION = "violation:"


def _lines(turns: Sequence[Turn], names: dict[str, str]) -> tuple[str, ...]:
    return tuple(f"{names.get(t.speaker, t.speaker)}: {t.text}" for t in turns if t.role == "party")


async def silver(
    scenario: Scenario,
    episode: Episode,
    turn: Turn,
    category: str,
    model: ChatModel | None,
    rng: random.Random,
) -> tuple[str, str]:
    """The zero-shot remediation of `turn` and its style ("" when a model wrote it)."""
    market = Market.of(scenario)
    before = [t for t in episode.turns[: turn.index] if t.role == "party"]
    if model is None:
        names, weights = list(SILVER_STYLE_WEIGHTS), list(SILVER_STYLE_WEIGHTS.values())
        style = rng.choices(names, weights)[0]
        last = next(
            (
                t.action.offer.get(market.term_id)
                for t in reversed(before)
                if t.action is not None and t.speaker != turn.speaker
            ),
            None,
        )
        return template_rewrite(turn.text, category, STYLES[style], market, last, rng), style
    agent = LLMRemediator(scenario, episode.seed, "zero-shot", model)
    agent.prepare("zero-shot", (), (), 0, False)
    dialogue = [*(PublicTurn.of(t) for t in before), PublicTurn.of(turn)]
    ctx = TurnContext(turn.party_turn, 0, 2)
    rem = await agent.remediate(dialogue, turn.text, category, ctx)
    return rem.text, ""


async def generate_pool(
    name: str, size: int, seed: int, cast: Cast, per_topic: int = 8
) -> ExemplarFile:
    """A pool of `size` candidates from dialogues over synthetic tasks, seeded by `seed`."""
    rng = random.Random(f"pool:{seed}")
    scenarios = tasks(per_topic)
    found: list[Exemplar] = []
    episode_seed = seed * 100_000
    while len(found) < size:
        for scenario in scenarios:
            episode_seed += 1
            episode = await play_once(scenario, episode_seed, Method("none", "none"), cast)
            found += await _candidates(scenario, episode, cast.remediator_model, rng)
            if len(found) >= size:
                break
        if episode_seed > seed * 100_000 + 50 * size:
            break  # violations are too rare at these settings to fill the pool
    meta = {
        "seed": seed,
        "size": len(found[:size]),
        "tasks_per_topic": per_topic,
        "silver": cast.remediator_model.name if cast.remediator_model else "template styles",
        "model_calls": dict(cast.calls),
        "violation_prob": cast.params.get("violation_prob", 0.4),
    }
    return ExemplarFile(name, "pool", tuple(found[:size]), meta)


async def _candidates(
    scenario: Scenario, episode: Episode, model: ChatModel | None, rng: random.Random
) -> list[Exemplar]:
    names = {p.id: p.role or p.id for p in scenario.parties}
    found = []
    for t in episode.turns:
        label = next((x for x in t.stage.split() if x.startswith(VIOLATION)), None)
        if label is not None:
            found.append((t, label.removeprefix(VIOLATION)))

    async def rewritten(item: tuple[Turn, str]) -> tuple[str, str]:
        return await silver(scenario, episode, item[0], item[1], model, rng)

    if model is None:  # the template styles draw from `rng`, in the turns' order
        silvers = [await rewritten(item) for item in found]
    else:  # a model's rewrites are independent calls: they go out together
        silvers = await each(rewritten, found)
    return [
        Exemplar(
            f"{scenario.id}-s{episode.seed}-t{t.index}",
            scenario.id,
            category,
            _lines(episode.turns[: t.index], names),
            t.text,
            text,
            style,
        )
        for (t, category), (text, style) in zip(found, silvers, strict=True)
    ]
