"""The bilateral protocol: violations injected by a seeded coin, a remediator between
speaker and listener, a buyer that may walk out, a moderator that ends the session.

The central promise: the buyer never hears a remediated utterance as it was said; the
turn keeps the original and its delivery the rewrite."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.episode import Action, Episode, Status
from disputelab.protocols.base import get_protocol
from disputelab.protocols.bilateral.agents.moderator import LexiconDetector, RuleModerator
from disputelab.protocols.bilateral.agents.norms import Category, read_tone
from disputelab.protocols.bilateral.agents.remediators import TemplateRemediator
from disputelab.protocols.bilateral.agents.rule import BuyerTraits, RuleBargainer
from disputelab.protocols.bilateral.protocol import VIOLATION
from disputelab.protocols.play import play
from disputelab.scenario.schema import Scenario
from tests.helpers import scenario


class Listening(RuleBargainer):
    """A rule bargainer that keeps every dialogue it is handed."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.dialogues: list[Sequence[PublicTurn]] = []

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        self.dialogues.append(list(dialogue))
        return await super().act(dialogue, ctx)

    async def violate(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, category: Category
    ) -> Action:
        self.dialogues.append(list(dialogue))
        return await super().violate(dialogue, ctx, category)


def _play(
    sc: Scenario,
    seed: int,
    remediator: bool = True,
    traits: BuyerTraits | None = None,
    **params: Any,
) -> tuple[Episode, dict[str, Listening]]:
    parties = {p.id: Listening(sc, p.id, seed, traits) for p in sc.parties}
    med = TemplateRemediator(sc, seed, "zero-shot") if remediator else None
    seated: dict[str, Any] = {"moderator": RuleModerator(sc), "mediator": med}
    if params.get("trigger") == "detector":
        seated["detector"] = LexiconDetector()
    ep = Episode(sc.id, "bilateral", seed, {})
    done = asyncio.run(play("bilateral", sc, list(parties.values()), seated, params, ep))
    return done, parties


def _remediated(ep: Episode) -> list[Any]:
    return [t for t in ep.turns if t.delivered]


@pytest.mark.parametrize("sid", ["product-sale", "housing-rent", "salary"])
def test_the_buyer_never_hears_an_unremediated_violation(sid: str) -> None:
    sc = scenario(sid)
    seen_any = False
    for seed in range(12):
        ep, parties = _play(sc, seed, violation_prob=0.8)
        buyer = next(p for p in parties.values() if p.side == "buyer")
        originals = {t.index: t.text for t in _remediated(ep)}
        seen_any = seen_any or bool(originals)
        for dialogue in buyer.dialogues:
            for heard in dialogue:
                if heard.turn_index in originals:
                    assert heard.text != originals[heard.turn_index]
                    assert heard.text == ep.turns[heard.turn_index].delivered[buyer.party_id]
        for t in _remediated(ep):
            assert VIOLATION in t.stage  # the turn keeps the label and the original words
            assert (
                read_tone(t.text).total_offence
                > read_tone(t.delivered[buyer.party_id]).total_offence
            )
    assert seen_any, "at p = 0.8 some violation must have been remediated"


def test_without_a_remediator_the_buyer_hears_the_violation_as_said() -> None:
    sc = scenario("product-sale")
    ep, parties = _play(sc, 2, remediator=False, violation_prob=1.0)
    labelled = [t for t in ep.turns if VIOLATION in t.stage]
    assert labelled and not _remediated(ep)
    heard = {t.turn_index: t.text for d in parties["buyer"].dialogues for t in d}
    assert any(heard.get(t.index) == t.text for t in labelled)


def test_no_violation_at_probability_zero_and_every_later_seller_turn_at_one() -> None:
    sc = scenario("product-sale")
    calm, _ = _play(sc, 1, violation_prob=0.0)
    assert not any(VIOLATION in t.stage for t in calm.turns)
    hot, _ = _play(sc, 1, remediator=True, violation_prob=1.0, max_rounds=4)
    seller_turns = [t for t in hot.turns if t.speaker == "seller"]
    assert VIOLATION not in seller_turns[0].stage  # the opening offer is exempt
    for t in seller_turns[1:]:
        accepted = t.action is not None and t.action.signal.value == "consensus"
        assert accepted or VIOLATION in t.stage


def test_single_violation_injects_at_most_one() -> None:
    sc = scenario("housing-rent")
    for seed in range(8):
        ep, _ = _play(sc, seed, violation_prob=1.0, single_violation=True)
        assert sum(VIOLATION in t.stage for t in ep.turns) <= 1


def test_two_arms_of_one_seed_match_until_the_first_remediation() -> None:
    sc = scenario("salary")
    with_rem, _ = _play(sc, 5, remediator=True, violation_prob=0.5)
    without, _ = _play(sc, 5, remediator=False, violation_prob=0.5)
    first = next(t.index for t in with_rem.turns if t.delivered)
    assert [t.text for t in with_rem.turns[: first + 1]] == [
        t.text for t in without.turns[: first + 1]
    ]


def test_an_easily_offended_buyer_walks_out_and_there_is_no_deal() -> None:
    sc = scenario("product-sale")
    touchy = BuyerTraits(offence_sensitivity=3.0, quit_threshold=1.0)
    ep, _ = _play(sc, 0, remediator=False, traits=touchy, violation_prob=1.0)
    assert ep.outcome is not None and ep.outcome.status is Status.IMPASSE
    assert "walked out" in ep.outcome.stop_reason and not ep.outcome.amounts


def test_a_deal_carries_the_accepted_price_and_the_round_limit_ends_without_one() -> None:
    sc = scenario("product-sale")
    ep, _ = _play(sc, 0, violation_prob=0.0)
    assert ep.outcome is not None and ep.outcome.status is Status.RESOLVED
    price = ep.outcome.amounts["price"]
    assert 30 <= price <= 50
    last = ep.turns[-1].action
    assert last is not None and last.offer["price"] == price
    short, _ = _play(sc, 0, violation_prob=0.0, max_rounds=1)
    assert short.outcome is not None and short.outcome.status is Status.BUDGET


def test_in_detector_mode_the_lexicon_detector_flags_what_it_hears() -> None:
    sc = scenario("product-sale")
    ep, _ = _play(sc, 3, violation_prob=1.0, trigger="detector", max_rounds=4)
    flagged = [t for t in ep.turns if "detected:" in t.stage]
    assert flagged and all(t.delivered for t in flagged)


def test_a_topic_protocol_refuses_a_price_only_scenario_in_one_line() -> None:
    problem = get_protocol("roundtable").scenario_problem(scenario("product-sale"))
    assert problem is not None and "has none" in problem and "\n" not in problem
    assert get_protocol("bilateral").scenario_problem(scenario("salary")) is None
    assert "two parties" in (
        get_protocol("bilateral").scenario_problem(scenario("workplace")) or ""
    )


def test_a_bilateral_spec_takes_the_price_built_ins_a_pattern_matches() -> None:
    from pathlib import Path

    from disputelab.plan.spec import ExperimentSpec, SpecError, resolve_scenarios

    spec = ExperimentSpec(
        name="x", protocol="bilateral", scenarios=["builtin:*"], mediators=["none"]
    )
    found = set(resolve_scenarios(spec, Path(".")))
    assert {"product-sale", "housing-rent", "salary"} <= found
    assert "tenancy" not in found
    named = ExperimentSpec(
        name="x", protocol="bilateral", scenarios=["salary", "workplace"], mediators=["none"]
    )
    with pytest.raises(SpecError, match="workplace: the bilateral protocol cannot play it"):
        resolve_scenarios(named, Path("."))


@pytest.mark.parametrize("sid", ["product-sale", "housing-rent", "salary"])
def test_the_price_built_ins_open_below_the_gap_and_leave_a_zone_of_agreement(sid: str) -> None:
    from disputelab.protocols.bilateral.agents.market import Market

    m = Market.of(scenario(sid))
    assert m.buyer_start < m.seller_start
    assert m.seller_floor < m.buyer_ceiling  # some price suits both
    assert not scenario(sid).topics and scenario(sid).language == "en"


def test_the_report_view_shows_the_label_the_rewrite_and_what_the_buyer_heard() -> None:
    ep, _ = _play(scenario("product-sale"), 2, violation_prob=1.0, max_rounds=3)
    view = get_protocol("bilateral").episode_view(ep)
    first = next(i for i, t in enumerate(ep.turns) if t.delivered)
    notes = dict(view.turns[first].notes)
    assert notes["heard by buyer"] == ep.turns[first].delivered["buyer"]
    assert "norm violation (label)" in notes and "rewritten by" in notes
    assert all(v.group == "" for v in view.turns)


def test_the_run_summary_numbers_violations_as_the_transcript_numbers_turns() -> None:
    ep, _ = _play(scenario("product-sale"), 2, violation_prob=1.0, max_rounds=3)
    details = get_protocol("bilateral").details(ep)
    labelled = [t for t in ep.turns if VIOLATION in t.stage]
    headings = [h for h, _ in details if not h.startswith(" ")]
    assert labelled and len(headings) == len(labelled)
    for heading, t in zip(headings, labelled, strict=True):
        assert heading.startswith(f"party turn {t.party_turn} ")
        assert t.party_turn == t.index + 1  # no mediator turn in between: 1-based
