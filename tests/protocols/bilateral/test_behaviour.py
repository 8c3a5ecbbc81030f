"""The bilateral rule buyer reads its social response from the behaviour table: the
shipped table holds the traits it had before they moved there, a run's `behaviour`
parameter reaches the bargainers it seats, and the neutral and mirrored worlds play
what their rows say."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.agents.registry import build_parties
from disputelab.agents.settings import AgentSettings
from disputelab.episode import Episode, Signal
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.protocols.agent_params import agent_settings
from disputelab.protocols.base import get_protocol
from disputelab.protocols.bilateral.agents.moderator import RuleModerator
from disputelab.protocols.bilateral.agents.remediators import TemplateRemediator
from disputelab.protocols.bilateral.agents.rule import BuyerTraits, RuleBargainer
from disputelab.protocols.play import play
from disputelab.report.worlds import worlds_markdown
from disputelab.scenario.behaviour import Behaviour, world_overrides
from disputelab.store.sqlite import Store
from tests.helpers import scenario

# BuyerTraits' defaults as they stood in agents/rule.py before its behavioural fields
# became rows of the behaviour table (main at f2a2a72), with the offence sensitivity
# then hard-coded as 2.0 x the persona's reactivity.
BEFORE = {
    "quit_threshold": 1.2,
    "anger_decay": 0.6,
    "hardening": 0.5,
    "trust_per_warmth": 0.25,
    "trust_per_offence": 0.35,
    "relation_per_warmth": 0.3,
    "relation_per_offence": 0.25,
    "trust_premium": 0.1,
    "dead_zone": 0.1,
    "deal_relation_bonus": 0.2,
    "walkout_relation_cost": 0.3,
}
INSULT = "Only an amateur would make an offer that feeble. $50 per unit is my price."


def _traits(behaviour: dict[str, float] | None = None, reactivity: float = 0.5) -> BuyerTraits:
    sc = scenario("product-sale")
    sc.party("buyer").persona.reactivity = reactivity
    return RuleBargainer(sc, "buyer", 0, behaviour=Behaviour.of(behaviour)).traits


def test_the_shipped_table_holds_the_buyer_traits_it_had_before() -> None:
    traits = _traits(reactivity=0.35)
    assert {k: getattr(traits, k) for k in BEFORE} == BEFORE
    assert traits.offence_sensitivity == pytest.approx(2.0 * 0.35)


def _episode(sid: str, seed: int, remediator: bool, **params: Any) -> Episode:
    sc = scenario(sid)
    settings = agent_settings(get_protocol("bilateral").params(params))
    agents = build_parties(sc, "rule", seed, None, "bargainer", settings=settings)
    med = TemplateRemediator(sc, seed, "zero-shot") if remediator else None
    seated = {"moderator": RuleModerator(sc), "mediator": med}
    done = Episode(sc.id, "bilateral", seed, {})
    return asyncio.run(play("bilateral", sc, agents, seated, params, done))


@pytest.mark.parametrize(
    ("sid", "seed", "remediator", "status", "amounts", "turns"),
    [
        # Recorded from runs of main at f2a2a72 (violation_prob 0.6), before the move.
        ("product-sale", 0, False, "impasse", {}, 16),
        ("housing-rent", 1, True, "resolved", {"price": 645000.0}, 19),
        ("salary", 3, False, "resolved", {"salary": 4070.0}, 20),
        ("salary", 2, False, "impasse", {}, 9),
    ],
)
def test_a_fixed_seed_episode_ends_where_it_did_before_the_move(
    sid: str, seed: int, remediator: bool, status: str, amounts: dict[str, float], turns: int
) -> None:
    ep = _episode(sid, seed, remediator, violation_prob=0.6)
    assert ep.outcome is not None
    assert (ep.outcome.status.value, ep.outcome.amounts, len(ep.turns)) == (
        status,
        amounts,
        turns,
    )


def test_a_behaviour_override_reaches_the_buyer_through_the_protocol_parameter() -> None:
    calm = _episode("salary", 2, False, violation_prob=0.6)
    assert calm.outcome is not None and "walked out" in calm.outcome.stop_reason
    unmoved = {"bilateral.offence_per_reactivity": 0.0}
    ep = _episode("salary", 2, False, violation_prob=0.6, behaviour=unmoved)
    assert ep.outcome is not None and "walked out" not in ep.outcome.stop_reason


def _hear(traits_of: dict[str, float], text: str) -> tuple[RuleBargainer, Signal]:
    sc = scenario("product-sale")
    buyer = RuleBargainer(sc, "buyer", 0, behaviour=Behaviour.of(traits_of))
    action = asyncio.run(
        buyer.act([PublicTurn(0, 1, "seller", "party", text)], TurnContext(1, 20, 2))
    )
    return buyer, action.signal


def test_in_the_neutral_world_nothing_the_buyer_hears_moves_it() -> None:
    neutral = world_overrides("neutral", {})
    buyer, signal = _hear(neutral, INSULT)
    assert (buyer.anger, buyer.trust, buyer.relationship) == (0.0, 0.0, 0.0)
    assert signal is Signal.CONTINUE
    warm, _ = _hear(neutral, "I am sorry, I put that badly. Our price is $50.")
    assert (warm.trust, warm.relationship) == (0.0, 0.0)


def test_in_the_mirrored_world_an_insult_builds_trust_and_warmth_costs_it() -> None:
    mirrored = world_overrides("mirrored", {})
    insulted, signal = _hear(mirrored, INSULT)
    assert insulted.anger < 0 < insulted.trust and insulted.relationship > 0
    assert signal is Signal.CONTINUE
    shipped, _ = _hear({}, INSULT)
    assert shipped.anger > 0 > shipped.trust
    warm, _ = _hear(mirrored, "I am sorry, I put that badly. Our price is $50.")
    assert warm.trust < 0 and warm.relationship < 0


def test_a_mirrored_buyer_never_offers_past_its_ceiling() -> None:
    sc = scenario("product-sale")
    mirrored = Behaviour.of(world_overrides("mirrored", {}))
    buyer = RuleBargainer(sc, "buyer", 0, behaviour=mirrored)
    buyer.anger, buyer.trust = -50.0, 0.0  # far past what any turn could add
    ctx = TurnContext(10, 20, 2)
    assert buyer.limit(ctx) <= buyer.market.buyer_ceiling
    assert buyer.limit(ctx) >= buyer.market.buyer_start


def test_given_traits_are_kept_as_they_are() -> None:
    sc = scenario("product-sale")
    traits = BuyerTraits(offence_sensitivity=3.0)
    settings = AgentSettings(behaviour=Behaviour.of({"bilateral.offence_per_reactivity": 0}))
    assert RuleBargainer(sc, "buyer", 0, traits, settings.behaviour).traits is traits


def test_on_a_worlds_axis_each_method_has_a_row_per_world(tmp_path: Path) -> None:
    spec = {
        "name": "bw",
        "protocol": "bilateral",
        "scenarios": ["product-sale", "salary"],
        "mediators": ["none", "zero-shot"],
        "worlds": ["shipped", "neutral", "mirrored"],
        "replicates": 2,
    }
    plan = plan_experiment(spec, profiles={})
    store = Store(tmp_path)
    asyncio.run(run_experiment(store, plan, ModelHub(None)))
    text = get_protocol("bilateral").experiment_tables(store, "bw", plan.config)
    rows = [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| ")][1:]
    assert rows == [
        f"| {method} in the {world} world"
        for method in ("Viol No-Remed.", "PROMPT (zero-shot)")
        for world in ("shipped", "neutral", "mirrored")
    ]
    worlds = worlds_markdown(store, "bw", plan.config)
    assert "| general | zero-shot − none | reward |" in worlds
