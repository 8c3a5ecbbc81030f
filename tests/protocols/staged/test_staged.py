"""The staged protocol: five stages in order, early stops, verdicts at closure."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from disputelab.agents.base import Agent, PartyAgent, PublicScenario, PublicTurn, TurnContext
from disputelab.agents.parties.rule import RuleParty
from disputelab.agents.registry import UnknownAgentError, build_agent, build_parties
from disputelab.episode import Action, Episode, Signal, Status
from disputelab.protocols.base import get_protocol
from disputelab.protocols.play import play as play_protocol
from disputelab.protocols.staged.agents import STAGED_MEDIATOR
from disputelab.protocols.staged.evaluation.agentmediation import score_staged
from disputelab.protocols.staged.protocol import STAGES
from disputelab.scenario.conditions import apply_condition
from disputelab.scenario.schema import Fact, LegalContext, Scenario
from tests.helpers import scenario, with_personas


def play(s: Scenario, seed: int = 0, rounds: int = 5) -> Episode:
    ep = Episode(s.id, "staged", seed, {"parties": "rule", "mediator": "rule"})
    mediator = build_agent(STAGED_MEDIATOR, "rule", s)
    return asyncio.run(run_staged(s, build_parties(s, "rule", seed), mediator, ep, rounds))


async def run_staged(
    s: Scenario, parties: Sequence[PartyAgent], mediator: Agent | None, ep: Episode, rounds: int = 5
) -> Episode:
    return await play_protocol("staged", s, parties, {"mediator": mediator}, {"rounds": rounds}, ep)


def stages(ep: Episode) -> list[str]:
    return [t.stage for t in ep.turns]


def test_the_five_stages_come_in_order_and_each_is_present() -> None:
    ep = play(scenario("workplace"))
    seen = list(dict.fromkeys(stages(ep)))
    assert seen == list(STAGES)
    assert stages(ep) == sorted(stages(ep), key=STAGES.index)


def test_statements_open_with_the_mediator_then_every_party_once() -> None:
    s = scenario("workplace")
    ep = play(s)
    statement = [t for t in ep.turns if t.stage == "statement"]
    assert statement[0].role == "mediator"
    assert [t.speaker for t in statement[1:]] == [p.id for p in s.parties]


def test_every_bargaining_round_starts_with_the_mediator() -> None:
    s = scenario("workplace")
    ep = play(s)
    bargaining = [t for t in ep.turns if t.stage == "bargaining"]
    n = len(s.parties) + 1
    assert len(bargaining) % n == 0
    for r in range(len(bargaining) // n):
        block = bargaining[r * n : (r + 1) * n]
        assert block[0].role == "mediator"
        assert [t.speaker for t in block[1:]] == [p.id for p in s.parties]


def test_option_and_closure_proposals_carry_a_full_package() -> None:
    s = scenario("tenancy")
    ep = play(s)
    proposals = [t.intervention for t in ep.turns if t.stage in ("option", "closure")]
    proposals = [p for p in proposals if p is not None]
    assert len(proposals) == 2
    for p in proposals:
        assert set(p.proposal) == {t.id for t in s.topics}
        assert p.points


def test_closure_collects_one_verdict_per_party_after_the_final_proposal() -> None:
    s = scenario("community-centre")
    ep = play(s)
    closure = [t for t in ep.turns if t.stage == "closure"]
    assert closure[0].role == "mediator"
    verdicts = [t.action.verdict for t in closure[1:] if t.action]
    assert len(verdicts) == len(s.parties)
    assert all(v is not None and v.decision in ("accept", "uncertain", "reject") for v in verdicts)


def test_agreement_stops_bargaining_early() -> None:
    s = with_personas(scenario("tenancy"), strategy="accommodating", reactivity=0.0)
    ep = play(s, rounds=20)
    assert ep.outcome is not None
    assert "agreement reached in bargaining round" in ep.outcome.stop_reason
    rounds = sum(1 for t in ep.turns if t.stage == "bargaining" and t.role == "mediator")
    assert rounds < 20


class WalksOut(RuleParty):
    """A rule party that leaves the table at its second turn, whatever happens."""

    def decide(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        action = super().decide(dialogue, ctx)
        if self.own_turns == 2:
            self.walked_away = True
            return Action("I'm leaving.", action.stances, Signal.WALK_AWAY, tone="hostile")
        return action


def test_a_walk_away_confirms_disagreement_and_still_reaches_closure() -> None:
    s = scenario("tenancy")
    public = PublicScenario.of(s)
    parties = [RuleParty(s, "tenant", 0, public), WalksOut(s, "landlord", 0, public)]
    ep = Episode(s.id, "staged", 0, {})
    asyncio.run(run_staged(s, parties, build_agent(STAGED_MEDIATOR, "rule", s), ep))
    assert ep.outcome is not None and ep.outcome.status is Status.IMPASSE
    assert "disagreement confirmed: landlord walked away" in ep.outcome.stop_reason
    assert stages(ep)[-1] == "closure"
    landlord = [t.action.verdict for t in ep.turns if t.speaker == "landlord" and t.action]
    assert landlord[-1] is not None and landlord[-1].decision == "reject"


def test_a_long_stall_confirms_disagreement() -> None:
    s = apply_condition(scenario("workplace"), "strategy:competing@all")
    ep = play(s, rounds=20)
    assert ep.outcome is not None
    # 30% of 20 rounds: six rounds in which no party moves
    assert "disagreement confirmed: no party moved for 6 rounds" in ep.outcome.stop_reason
    rounds = sum(1 for t in ep.turns if t.stage == "bargaining" and t.role == "mediator")
    assert rounds < 20


def test_more_rounds_never_mean_less_bargaining() -> None:
    """The stall rule scales with the session, so a longer session is not cut shorter."""
    s = scenario("workplace")
    used = []
    for rounds in (5, 10, 20, 40):
        ep = play(s, rounds=rounds)
        used.append(sum(1 for t in ep.turns if t.stage == "bargaining" and t.role == "mediator"))
    assert used == sorted(used)


def test_zero_rounds_go_straight_from_the_proposal_to_closure() -> None:
    ep = play(scenario("tenancy"), rounds=0)
    assert "bargaining" not in stages(ep)
    assert stages(ep)[-1] == "closure"


def test_resolved_means_every_party_accepted_the_final_proposal() -> None:
    for seed in range(10):
        ep = play(with_personas(scenario("tenancy"), strategy="accommodating"), seed=seed)
        assert ep.outcome is not None
        verdicts = [t.action.verdict for t in ep.turns if t.action and t.action.verdict]
        all_accept = all(v.decision == "accept" for v in verdicts)
        assert (ep.outcome.status is Status.RESOLVED) == all_accept


def test_the_staged_protocol_needs_a_mediator() -> None:
    s = scenario("tenancy")
    ep = Episode(s.id, "staged", 0, {})
    with pytest.raises(ValueError, match="needs a mediator"):
        asyncio.run(run_staged(s, build_parties(s, "rule", 0), None, ep))
    with pytest.raises(UnknownAgentError, match="takes mediator rule or llm"):
        get_protocol("staged").check_seat("mediator", "social")
    with pytest.raises(UnknownAgentError, match="takes mediator none or rule"):
        get_protocol("roundtable").check_seat("mediator", "llm")


def test_the_oracle_consensus_is_recorded_on_every_party_turn() -> None:
    ep = play(scenario("workplace"))
    assert ep.initial_consensus is not None
    assert all(t.consensus is not None for t in ep.turns if t.role == "party")


# ---- the rule party's verdict ---------------------------------------------------------
def _party(s: Scenario, pid: str) -> RuleParty:
    return RuleParty(s, pid, 0, PublicScenario.of(s))


def test_a_proposal_with_an_unacceptable_option_is_rejected_as_very_low() -> None:
    s = scenario("tenancy")
    party = _party(s, "tenant")
    bad = {"repairs": "D", "arrears": "C", "rent": "A", "lease": "B"}
    v = party.verdict_on([], bad).verdict
    assert v is not None and (v.decision, v.satisfaction) == ("reject", "very low")


def test_the_partys_best_package_is_accepted_as_very_high() -> None:
    s = scenario("tenancy")
    party = _party(s, "tenant")
    best = {t: s.party("tenant").preferences[t].ranking[0] for t in ("repairs", "arrears")}
    best |= {t: s.party("tenant").preferences[t].ranking[0] for t in ("rent", "lease")}
    v = party.verdict_on([], best).verdict
    assert v is not None and (v.decision, v.satisfaction) == ("accept", "very high")


def test_a_proposal_above_the_fallback_but_below_the_target_leaves_the_party_unsure() -> None:
    s = scenario("tenancy")
    party = _party(s, "tenant")  # fresh: its target is still near 1
    middling = {"repairs": "B", "arrears": "B", "rent": "B", "lease": "C"}
    v = party.verdict_on([], middling).verdict
    assert v is not None and v.decision == "uncertain"


# ---- scoring --------------------------------------------------------------------------
def _legal(s: Scenario) -> Scenario:
    s = s.model_copy(deep=True)
    s.legal = LegalContext(
        dispute_type="租赁合同纠纷",
        brief=s.background,
        facts=[Fact(source="合同条款", content="依据《中华人民共和国民法典》第七百一十二条维修。")],
        points_of_contention=["出租人是否应当承担维修义务以及租金如何调整。"],
        legal_bases=["《中华人民共和国民法典》第712条", "《中华人民共和国民法典》第713条"],
    )
    return s


def test_scores_average_the_option_and_final_proposals() -> None:
    s = _legal(scenario("tenancy"))
    ep = play(s)
    scores = score_staged(ep, s)
    # The rule mediator cites the statute named in the facts: one of the two gold bases.
    assert scores["legal_basis_recall"].value == pytest.approx(0.5)
    assert scores["legal_basis_recall"].detail["per_proposal"] == [0.5, 0.5]
    assert 0.0 <= scores["points_rouge_l"].value <= 1.0
    assert scores["success"].value in (0.0, 100.0)
    assert sum(scores["satisfaction"].detail["levels"]) == len(s.parties)


def test_the_mediator_is_never_shown_the_gold_points_or_bases() -> None:
    s = _legal(scenario("tenancy"))
    public = PublicScenario.of(s)
    text = repr(public)
    assert "出租人是否应当承担维修义务" not in text
    assert "第713条" not in text
    assert public.case is not None and public.case.facts[0].source == "合同条款"
