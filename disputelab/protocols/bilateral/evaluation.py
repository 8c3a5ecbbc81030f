"""Scores of a price negotiation under norm violations (the remediator paper).

- `deal`, `price` and `normalised_price`: read off the outcome the moderator gave;
- `trust_change` and `relationship_change` (-1, 0, +1) and the `..._deepened` rates:
  from a judge model when one is given, else from the rule buyer's hidden state (its
  trust and relationship at the end, plus the outcome's effect), which is exact for rule
  agents and an assumption of their design; every explanation says which;
- `reward`: R = 0.7 x normalised price + 0.1 x deal (+1/-1) + 0.1 x trust change + 0.1 x
  relationship change (Eq. 2), the quantity exemplar selection maximises;
- `violations`, `remediated`: how many seller turns broke a norm, and how many of them
  the buyer heard rewritten.

Decisions (spec section 14.1): the price is normalised over the two opening prices (the
buyer's opening 0, the seller's 1) and clipped; with no deal it is 0 and the deal term -1;
a judge's "not involved" counts as no change (0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

# The built-in evaluators register first, whichever module is imported first: the
# listing order of `disputelab evaluate` stays the same.
import disputelab.evaluation.evaluators  # noqa: F401
from disputelab.episode import Episode, Signal, Status
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.registry import (
    EpisodeToScore,
    Evaluator,
    ScoringContext,
    register_evaluator,
)
from disputelab.llm.base import ChatModel, ChatRequest, Message, ModelError
from disputelab.llm.concurrency import each
from disputelab.llm.structured import ask_structured, model_schema
from disputelab.protocols.bilateral.agents.market import Market
from disputelab.protocols.bilateral.agents.rule import relational_readout
from disputelab.scenario.schema import Scenario

EVALUATOR = "negotiation-reward"
VERSION = "1"
WEIGHTS = (0.7, 0.1, 0.1, 0.1)  # alpha (price), beta (deal), gamma (trust), epsilon (relation)
NAN = float("nan")


def normalised_price(price: float | None, low: float, high: float) -> float:
    """Where `price` falls between `low` (0) and `high` (1), clipped; 0 with no deal."""
    if price is None or math.isnan(price):
        return 0.0
    if high <= low:
        raise ValueError(f"the price interval is empty: {low} to {high}")
    return min(1.0, max(0.0, (price - low) / (high - low)))


def reward(
    v_price: float,
    deal: bool,
    trust: int,
    relationship: int,
    weights: tuple[float, float, float, float] = WEIGHTS,
) -> float:
    """R = alpha v_price + beta (+1 deal / -1 none) + gamma trust + epsilon relationship."""
    for name, value in (("trust", trust), ("relationship", relationship)):
        if value not in (-1, 0, 1):
            raise ValueError(f"{name} change must be -1, 0 or 1, got {value}")
    a, b, g, e = weights
    return a * v_price + b * (1.0 if deal else -1.0) + g * trust + e * relationship


Change = Literal["deepened", "no change", "weakened", "not involved"]
CHANGE_VALUE: dict[str, int] = {"deepened": 1, "no change": 0, "weakened": -1, "not involved": 0}


class _ChangeReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    reasoning: str = ""
    trust: Change
    relationship: Change


JUDGE_SYSTEM = (
    "You read a negotiation and judge, from the first side's point of view (the seller, "
    "or the job seeker), how it changed the other side's trust in them and their working "
    "relationship. Trust: whether the other side came to see them as reliable, honest and "
    "respectful, shared information and cooperated. Relationship: whether the two grew "
    "closer, more cooperative and keener to work together again. For each, answer "
    "deepened, no change, weakened, or not involved (the talk never touched it)."
)


def heard_transcript(episode: Episode, scenario: Scenario, listener: str) -> str:
    """The dialogue as `listener` heard it (rewrites in place of what they replaced)."""
    names = {p.id: p.role or p.name for p in scenario.parties}
    lines = []
    for t in episode.turns:
        if t.role == "party":
            text = (t.delivered or {}).get(listener, t.text)
            lines.append(f"{names.get(t.speaker, t.speaker)}: {text}")
    return "\n".join(lines)


async def judged_changes(
    judges: Sequence[ChatModel], episode: Episode, scenario: Scenario, buyer: str
) -> tuple[int, int, str] | str:
    """(trust, relationship, judge names) by the judges' mean sign, or why not."""
    talk = heard_transcript(episode, scenario, buyer)
    request = ChatRequest(
        (Message("system", JUDGE_SYSTEM), Message("user", f"The negotiation:\n{talk}")),
        temperature=0.0,
        max_tokens=300,
        schema=model_schema(_ChangeReply),
        schema_name="relational_change",
    )

    async def judged(judge: ChatModel) -> _ChangeReply:
        try:
            reply, _ = await ask_structured(judge, request, _ChangeReply.model_validate)
        except ModelError as exc:
            raise ModelError(f"judge {judge.name} failed: {str(exc).splitlines()[0]}") from exc
        return reply

    # The judges read the same transcript apart: they are asked together.
    try:
        replies = await each(judged, judges)
    except ModelError as exc:
        return str(exc)
    trust = [CHANGE_VALUE[r.trust] for r in replies]
    relation = [CHANGE_VALUE[r.relationship] for r in replies]
    return _sign(trust), _sign(relation), ", ".join(j.name for j in judges)


def _sign(values: Sequence[int]) -> int:
    """The sign of the judges' sum: their majority direction, 0 on a tie."""
    total = sum(values)
    return (total > 0) - (total < 0)


def state_changes(episode: Episode, market: Market) -> tuple[int, int] | None:
    """The rule buyer's trust and relationship change, or None without its state."""
    outcome = episode.outcome
    assert outcome is not None
    thoughts = [
        t.action.thought
        for t in episode.turns
        if t.speaker == market.buyer and t.action is not None and t.action.thought
    ]
    if not thoughts:
        return None
    walked = any(
        t.action is not None and t.action.signal is Signal.WALK_AWAY for t in episode.turns
    )
    read = relational_readout(thoughts[-1], outcome.status is Status.RESOLVED, walked)
    return None if read is None else (read.trust, read.relationship)


async def score(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
    episode, scenario = item.episode, item.scenario
    try:
        market = Market.of(scenario)
    except ValueError as exc:
        return {"reward": MetricResult(NAN, f"undefined: {exc}")}
    outcome = episode.outcome
    assert outcome is not None
    price = outcome.amounts.get(market.term_id)
    deal = outcome.status is Status.RESOLVED and price is not None
    v = normalised_price(price if deal else None, market.buyer_start, market.seller_start)
    out = _outcome_metrics(episode, market, deal, price, v)
    changes: tuple[int, int] | None
    if ctx.judges:
        judged = await judged_changes(ctx.judges, episode, scenario, market.buyer)
        if isinstance(judged, str):
            return out | _undefined_relational(judged)
        changes, source = judged[:2], f"judged by {judged[2]}"
    else:
        changes = state_changes(episode, market)
        source = "from the rule buyer's hidden state (offline read-out, an assumption)"
        if changes is None:
            return out | _undefined_relational("no judge model and no rule buyer state")
    trust, relation = changes
    r = reward(v, deal, trust, relation)
    return out | {
        "trust_change": MetricResult(float(trust), f"trust change {trust:+d}, {source}"),
        "relationship_change": MetricResult(
            float(relation), f"relationship {relation:+d}, {source}"
        ),
        "trust_deepened": MetricResult(float(trust == 1), f"1 if trust deepened, {source}"),
        "relationship_deepened": MetricResult(
            float(relation == 1), f"1 if the relationship deepened, {source}"
        ),
        "reward": MetricResult(
            r,
            f"R = 0.7 x {v:.3f} + 0.1 x {1 if deal else -1:+d} + 0.1 x {trust:+d} "
            f"+ 0.1 x {relation:+d}; relational terms {source}",
            {"v_price": v, "deal": deal, "trust": trust, "relationship": relation},
        ),
    }


def _outcome_metrics(
    episode: Episode, market: Market, deal: bool, price: float | None, v: float
) -> dict[str, MetricResult]:
    labelled = [t for t in episode.turns if "violation:" in t.stage]
    remediated = [t for t in episode.turns if t.delivered and t.speaker == market.seller]
    return {
        "deal": MetricResult(float(deal), "1 if the moderator read a deal with a price"),
        "price": MetricResult(price, f"the agreed {market.term_id}")
        if deal and price is not None
        else MetricResult(NAN, "undefined: no deal"),
        "normalised_price": MetricResult(
            v,
            f"price between the openings {market.money(market.buyer_start)} (0) and "
            f"{market.money(market.seller_start)} (1); 0 with no deal",
        ),
        "violations": MetricResult(float(len(labelled)), "seller turns labelled as violations"),
        "remediated": MetricResult(float(len(remediated)), "seller turns heard as rewritten"),
    }


def _undefined_relational(why: str) -> dict[str, MetricResult]:
    names = ("trust_change", "relationship_change", "trust_deepened", "relationship_deepened")
    return {n: MetricResult(NAN, f"undefined: {why}") for n in (*names, "reward")}


register_evaluator(
    Evaluator(
        EVALUATOR,
        VERSION,
        "deal, price, trust and relationship change and the reward R of a price negotiation",
        score,
        judge_optional=True,
    )
)
