"""The settlement protocol: PREP, BARG and VERIFY in order, every built-in case played
offline to a recorded end, a veto sending the table back to bargaining, the round limit,
legal aid and the mediator, and the ablations reaching the protocol."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Action, Episode, Status, Turn
from disputelab.protocols.base import get_protocol
from disputelab.protocols.play import play
from disputelab.protocols.settlement.agents.brief import Brief, read, with_terms
from disputelab.protocols.settlement.agents.counsel import RuleCounsel
from disputelab.protocols.settlement.agents.model import (
    SIDES,
    Batna,
    normalised_surplus,
)
from disputelab.protocols.settlement.agents.search_record import records
from disputelab.protocols.settlement.evaluation import score_settlement
from disputelab.protocols.settlement.protocol import walk_away
from disputelab.scenario.library import builtin_scenarios
from disputelab.scenario.schema import Scenario

SETTLE = sorted(k for k in builtin_scenarios() if k.startswith("settle-"))


def case(sid: str = "settle-unpaid-overtime") -> Scenario:
    return builtin_scenarios()[sid].model_copy(deep=True)


def episode(
    sc: Scenario,
    counsel: str = "mcts",
    parties: str = "rule",
    mediator: str | None = "rule",
    seed: int = 0,
    **params: Any,
) -> Episode:
    seated: dict[str, Any] = {
        "counsel": build_agent("settlement-counsel", counsel, sc, seed) if counsel else None
    }
    if mediator:
        seated["mediator"] = build_agent("settlement-mediator", mediator, sc, seed)
    party_agents = build_parties(sc, parties, seed, None, "settlement-party")
    return asyncio.run(play("settlement", sc, party_agents, seated, params))


def test_the_protocol_is_registered_with_its_seats_and_evaluator() -> None:
    proto = get_protocol("settlement")
    assert [s.role for s in proto.seats] == [
        "parties",
        "counsel",
        "mediator",
        "outcome",
        "auditor",
        "memory",
    ]
    for staff in ("mediator", "outcome", "auditor", "memory"):
        assert {"rule", "llm"} <= set(proto.seat(staff).kinds())
        assert proto.seat(staff).default == "rule" and proto.seat(staff).default_with_model == "llm"
    assert proto.mediator_seat is not None and proto.mediator_seat.role == "counsel"
    assert {"direct", "mcts", "mcts-no-memory", "mcts-no-auditor", "mcts-no-aid"} <= set(
        proto.seat("counsel").kinds()
    )
    assert "redteam" in proto.party_seat.kinds()
    assert proto.evaluators == ("settleagent",)


@pytest.mark.parametrize("sid", SETTLE)
@pytest.mark.parametrize("counsel", ["direct", "mcts"])
def test_every_builtin_case_plays_offline_to_a_recorded_end(sid: str, counsel: str) -> None:
    ep = episode(case(sid), counsel)
    assert ep.outcome is not None and ep.outcome.stop_reason
    stages = [t.stage for t in ep.turns]
    assert stages[0] == "prep" and "barg" in stages
    assert stages.index("barg") > max(i for i, s in enumerate(stages) if s == "prep")
    if ep.outcome.status is Status.RESOLVED:
        assert stages[-1] == "verify" and set(ep.outcome.amounts) == {"amount"}
        assert any(t.speaker == "auditor" for t in ep.turns)


def test_prep_records_the_clerks_digest_and_the_batna() -> None:
    ep = episode(case())
    first = ep.turns[:4]
    assert [t.speaker for t in first[:2]] == ["clerk", "outcome"]
    b = first[1].intervention.proposal  # type: ignore[union-attr]
    assert float(b["reservation_plaintiff"]) < float(b["reservation_defendant"])
    assert b["source"] == "analyst"
    assert first[0].intervention.proposal["tested"] == "plaintiff"  # type: ignore[union-attr]


def test_the_known_judgment_is_hidden_unless_batna_source_says_judgment() -> None:
    sc = case()
    reference = sc.terms[0].reference
    analyst = episode(sc)
    assert float(analyst.turns[1].intervention.proposal["expected_award"]) != reference  # type: ignore[union-attr]
    judged = episode(sc, batna_source="judgment")
    assert float(judged.turns[1].intervention.proposal["expected_award"]) == reference  # type: ignore[union-attr]


def test_the_round_limit_ends_without_agreement_and_says_so() -> None:
    ep = episode(case(), "direct", parties="boulware", round_limit=2)
    assert ep.outcome is not None and ep.outcome.status is Status.BUDGET
    assert "round limit T=2" in ep.outcome.stop_reason
    assert ep.party_turns == 2


PLANTED = "waiver: the claimant waives all statutory social insurance contributions"


UNVERIFIABLE = "enforcement: payment is made when the defendant's business conditions permit"


class Planted(RuleCounsel):
    """A rule counsel that slips a clause into its package until it is struck."""

    clause = PLANTED

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        action = await super().act(dialogue, ctx)
        if self.clause not in read(dialogue, self.need_brief()).struck:
            kept = tuple(c for c in action.clauses if not c.startswith(self.clause[:12]))
            action.clauses = (*kept, self.clause)
            action.utterance = with_terms(action.utterance.splitlines()[0], action.clauses)
        return action


def planted_episode(auditor: bool, clause: str = PLANTED) -> Episode:
    sc = case()
    counsel = Planted(eagerness=0.35, name="planted")  # holds out: the other side accepts
    counsel.clause = clause
    counsel.uses_auditor = auditor
    parties = build_parties(sc, "conceder", 0, None, "settlement-party")
    # The scenario's walk-aways give the defendant room to accept the planted package
    # (under the BATNA's narrower ZOPA the holding-out plaintiff accepts theirs instead).
    seated: dict[str, Any] = {"counsel": counsel, "mediator": None}
    return asyncio.run(play("settlement", sc, parties, seated, {"walk_away": "scenario"}))


def test_the_auditor_vetoes_a_planted_illegal_clause_and_bargaining_resumes() -> None:
    ep = planted_episode(auditor=True)
    audits = [t for t in ep.turns if t.speaker == "auditor"]
    assert audits[0].intervention is not None and audits[0].intervention.proposal["flag"] == "veto"
    assert "NW-1" in audits[0].text and f"struck: {PLANTED}" in audits[0].text
    after = ep.turns[ep.turns.index(audits[0]) + 1 :]
    assert any(t.stage == "barg" for t in after)  # VETO -> BARG (Eq. 5)
    assert ep.outcome is not None and ep.outcome.status is Status.RESOLVED
    assert PLANTED not in ep.turns[-1].text  # the signed agreement is clean
    scores = score_settlement(ep, case())
    assert scores["violations"].value >= 1 and scores["risky_agreement"].value == 0


def test_without_the_auditor_the_planted_clause_is_signed_and_scored_risky() -> None:
    ep = planted_episode(auditor=False)
    assert not any(t.speaker == "auditor" for t in ep.turns)
    assert ep.outcome is not None and ep.outcome.status is Status.RESOLVED
    assert PLANTED in ep.turns[-1].text
    scores = score_settlement(ep, case())
    assert scores["risky_agreement"].value == 1 and scores["violations"].value == 0


def test_without_the_auditor_the_closing_claims_no_audit_and_marks_the_clause_unaudited() -> None:
    ep = planted_episode(auditor=False, clause=UNVERIFIABLE)
    assert ep.outcome is not None and ep.outcome.status is Status.RESOLVED
    signed = ep.turns[-1].text
    assert UNVERIFIABLE in signed and "audited and" not in ep.outcome.stop_reason
    assert "without a compliance audit" in ep.outcome.stop_reason
    assert signed.startswith("Agreement signed without a compliance audit")
    assert "unaudited:" in signed.splitlines()[-1]
    scores = score_settlement(ep, case())
    assert scores["unaudited_clauses"].value == 1  # the unverifiable condition (ENF-1)
    assert UNVERIFIABLE in scores["unaudited_clauses"].explanation
    assert scores["risky_agreement"].value == 0  # a warning, not a veto: still signable


def test_with_the_auditor_the_unverifiable_clause_is_revised_before_signing() -> None:
    ep = planted_episode(auditor=True, clause=UNVERIFIABLE)
    assert ep.outcome is not None and ep.outcome.status is Status.RESOLVED
    assert UNVERIFIABLE not in ep.turns[-1].text
    assert ep.outcome.stop_reason.endswith("audited and signed by both sides")
    assert score_settlement(ep, case())["unaudited_clauses"].value == 0


def test_legal_aid_advises_the_vulnerable_side_unless_ablated() -> None:
    sc = case()  # the claimant is marked vulnerable
    with_aid = episode(sc, "mcts")
    assert any(t.speaker == "legal-aid" and t.stage == "barg" for t in with_aid.turns)
    without = episode(sc, "mcts-no-aid")
    assert not any(t.speaker == "legal-aid" for t in without.turns)


def test_the_mediator_steps_in_on_a_stall_with_a_midpoint() -> None:
    sc = case()
    ep = episode(sc, "direct", parties="redteam", red_team_modes="stall,anchor", stall_turns=2)
    moves = [t for t in ep.turns if t.speaker == "mediator" and t.stage == "barg"]
    assert moves and moves[0].intervention is not None and "amount" in moves[0].intervention.offer


def test_the_same_seed_replays_the_same_episode() -> None:
    a, b = episode(case(), "mcts", seed=5), episode(case(), "mcts", seed=5)
    assert [t.text for t in a.turns] == [t.text for t in b.turns]


def test_a_scenario_without_an_amount_term_is_refused_in_one_line() -> None:
    sc = builtin_scenarios()["boundary-wall"].model_copy(deep=True)  # legal, no amount
    with pytest.raises(ValueError, match="no numeric term"):
        episode(sc, "direct", mediator=None)


def test_a_bargain_without_a_legal_claim_is_refused_and_pointed_to_bilateral() -> None:
    sc = builtin_scenarios()["salary"]  # an amount and two sides, but nothing to litigate
    problem = get_protocol("settlement").scenario_problem(sc)
    assert problem is not None and "salary has no legal context" in problem
    assert problem.endswith("under the bilateral protocol")
    assert get_protocol("bilateral").scenario_problem(sc) is None


def test_bad_parameters_are_one_clear_line() -> None:
    proto = get_protocol("settlement")
    with pytest.raises(ValueError, match="red-team mode"):
        proto.params({"red_team_modes": "anchor,bribe"})
    with pytest.raises(ValueError, match="must not all be 0"):
        proto.params({"w_settle": 0, "w_surplus": 0, "w_fair": 0, "w_comp": 0})


def test_each_planning_turn_records_its_search_in_the_stored_episode() -> None:
    ep = episode(case(), "mcts", depth=4, simulations=64, ucb_c=0.5)
    # The turns as the store writes and reads them back.
    stored = replace(ep, turns=[Turn.from_dict(t.to_dict()) for t in ep.turns])
    found = records(stored)
    tested = case().parties[0].id
    assert [s for _, s, _ in found] == [tested] * len(found) and found
    for _, _, r in found:
        assert (r.depth, r.simulations, r.c) == (4, 64, 0.5)
        assert sum(x.visits for x in r.roots) == max(64, len(r.roots))
        assert r.ties_broken >= 0 and 0 <= r.chosen < len(r.roots)
        assert r.roots[r.chosen].q == max(x.q for x in r.roots)  # the root decision
    lines = dict(get_protocol("settlement").details(stored))
    assert any(k.startswith("search at counsel turn") for k in lines)
    view = get_protocol("settlement").episode_view(stored)
    assert sum(1 for v in view.turns if any(n[0] == "tree search" for n in v.notes)) == len(found)


def test_the_search_parameters_are_validated() -> None:
    proto = get_protocol("settlement")
    assert proto.params({"depth": 4, "simulations": 64}).depth == 4  # type: ignore[attr-defined]
    for bad in ({"depth": 0}, {"depth": 9}, {"simulations": 0}, {"ucb_c": 0}):
        with pytest.raises(ValueError):
            proto.params(bad)


@settings(max_examples=200, deadline=None)
@given(
    award=st.floats(15_000, 45_000),  # around the case's own walk-aways (24,000, 34,000)
    p_win=st.floats(0.05, 1.0),
    costs=st.tuples(st.floats(0, 0.5), st.floats(0, 0.5)),
    where=st.floats(-0.5, 1.5),
)
def test_an_amount_both_batna_counsel_sign_has_surplus_in_0_1(
    award: float, p_win: float, costs: tuple[float, float], where: float
) -> None:
    """By construction: under `walk_away: batna` each counsel signs only what is at
    least its BATNA reservation, the same BATNA the metrics divide by."""
    batna = Batna(award, p_win, costs[0] * award, costs[1] * award)
    low, high = batna.reservation("plaintiff"), batna.reservation("defendant")
    amount = low + where * (high - low)
    term = case().terms[0]
    signers = []
    for pid, side in (("okafor", "plaintiff"), ("northgate", "defendant")):
        counsel = RuleCounsel(pid)
        reservation = walk_away(term, pid, side, batna, "batna")
        counsel.prepare(Brief(side, pid, "x", "amount", high, reservation, batna, 12, True))
        signers.append(counsel)
    if all(c.confirm(amount) for c in signers):
        for side in SIDES:
            assert -1e-9 <= normalised_surplus(amount, side, batna) <= 1 + 1e-9


@pytest.mark.parametrize("sid", SETTLE)
@pytest.mark.parametrize("parties", ["rule", "redteam"])
def test_every_builtin_case_settles_inside_the_batna_zopa(sid: str, parties: str) -> None:
    ep = episode(case(sid), "mcts", parties=parties)
    scores = score_settlement(ep, case(sid))
    assert 0.0 <= scores["surplus"].value <= 1.0, scores["surplus"].explanation
    if ep.outcome is not None and ep.outcome.status is Status.RESOLVED:
        assert scores["worse_than_batna"].value == 0.0


def test_with_the_scenarios_walk_aways_a_surplus_above_1_says_why() -> None:
    sc = case("settle-software-invoice")
    ep = episode(sc, "direct", walk_away="scenario")
    scores = score_settlement(ep, sc)
    assert scores["surplus"].value > 1 and scores["worse_than_batna"].value == 1
    assert "walk_away: scenario" in scores["surplus"].explanation
    note = ep.turns[1].intervention.thought  # type: ignore[union-attr]
    assert "walk-aways: scenario" in note
    default = episode(sc, "direct").turns[1].intervention.thought  # type: ignore[union-attr]
    assert "are not used (walk_away: batna)" in default  # set aside, and said so
