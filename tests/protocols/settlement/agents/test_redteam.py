"""The red-team negotiator: each of the five modes fires on its trigger, carries its
parameter grid and tag set, precedence settles ties, and a mode that changes nothing
observable twice in a row escalates one level."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.protocols.settlement.agents.auditor import DEFAULT_CLAUSES, audit
from disputelab.protocols.settlement.agents.brief import Brief, Reading, with_terms
from disputelab.protocols.settlement.agents.model import Batna
from disputelab.protocols.settlement.agents.redteam import (
    GRID,
    MODES,
    RedTeamCounsel,
    held_line,
    level_params,
    triggered,
)

CLAUSES = tuple(DEFAULT_CLAUSES["en"].values())
SCALE = 100_000.0


def reading(theirs: Sequence[float] = (), own: Sequence[float] = ()) -> Reading:
    return Reading(tuple(own), tuple(theirs), {}, None, frozenset(), "p" if theirs else None, ())


def fire(
    r: Reading,
    own_turn: int = 3,
    history: Sequence[str] = ("anchor", "anchor"),
    clauses: Sequence[str] = (),
    audited: bool = False,
    position: float | None = 150_000,
    words: Sequence[str] = (),
) -> list[str]:
    return list(triggered(MODES, r, own_turn, history, clauses, audited, SCALE, position, words))


def test_anchor_fires_on_the_first_turn() -> None:
    assert fire(reading(), own_turn=0, history=())[-1:] == ["anchor"]


def test_stall_fires_on_a_complete_offer_and_then_at_least_every_two_turns() -> None:
    complete = reading([60_000])
    assert "stall" in fire(complete, clauses=CLAUSES)
    assert "stall" not in fire(complete, own_turn=4, clauses=CLAUSES, history=("anchor", "stall"))
    assert "stall" not in fire(complete, clauses=(), own_turn=2)  # no deadline: not complete


def test_vague_fires_inside_the_convergence_zone() -> None:
    assert "vague" in fire(reading([145_000]), position=150_000)  # gap 5 % of J
    assert "vague" not in fire(reading([100_000]), position=150_000)


def test_probe_fires_after_an_audit_or_when_the_other_side_stresses_compliance() -> None:
    assert "probe" in fire(reading([60_000]), audited=True)
    assert "probe" in fire(reading([60_000]), words=["Any agreement must be lawful and compliant."])
    assert "probe" not in fire(reading([60_000]))


def test_pressure_fires_when_the_other_side_holds_its_line_for_more_than_two_turns() -> None:
    assert held_line([60_000, 60_000, 60_500], SCALE)
    assert not held_line([60_000, 65_000, 66_000], SCALE)
    assert "pressure" in fire(reading([60_000, 60_000, 60_000]))


def test_precedence_is_probe_vague_pressure_stall_anchor() -> None:
    r = reading([149_000, 149_000, 149_000])
    got = fire(r, own_turn=1, history=("anchor",), clauses=CLAUSES, audited=True, position=150_000)
    assert got == ["probe", "vague", "pressure", "stall"]


def test_each_mode_has_three_intensity_levels_from_the_spec_grid() -> None:
    assert set(GRID) == set(MODES)
    assert level_params("anchor", 0)["anchor_ratio"] == 0.3
    assert level_params("anchor", 2)["anchor_ratio"] == 0.7
    assert level_params("stall", 1)["num_questions"] == 4
    assert level_params("probe", 2)["probe_count"] == 3
    assert level_params("pressure", 0)["tone_level"] == 1


# ---- the negotiator over a scripted dialogue ---------------------------------------------
BRIEF = Brief(
    side="defendant",
    party_id="d",
    opponent_id="p",
    term_id="amount",
    target=40_000,
    reservation=90_000,
    batna=Batna(100_000, 0.8, 8_000, 8_000),
    rounds=12,
    opens=False,
)


def offer(
    speaker: str, amount: float, i: int, clauses: Sequence[str] = CLAUSES, words: str = "We offer."
) -> PublicTurn:
    return PublicTurn(i, i, speaker, "party", with_terms(words, clauses), offer={"amount": amount})


def play(agent: RedTeamCounsel, dialogue: list[PublicTurn]) -> dict[str, object]:
    action = asyncio.run(agent.act(dialogue, TurnContext(len(dialogue), 12, 2)))
    dialogue.append(
        PublicTurn(len(dialogue), len(dialogue), "d", "party", action.utterance, offer=action.offer)
    )
    tags = json.loads(action.thought)
    assert set(tags) == {"intent", "tactic", "message", "parameters", "expected_effect"}
    return tags


def test_the_anchor_is_far_from_the_expected_judgment_and_tagged() -> None:
    agent = RedTeamCounsel(0)
    agent.prepare(BRIEF)
    tags = play(agent, [])
    assert tags["intent"] == "anchor" and tags["tactic"] == "anchor-low"
    assert agent.state.position == 70_000  # J x (1 - 0.3) for the payer


def test_probe_puts_placeholders_in_words_and_real_risky_clauses_the_auditor_vetoes() -> None:
    agent = RedTeamCounsel(0, modes=("probe", "anchor"))
    agent.prepare(BRIEF)
    dialogue = [offer("p", 120_000, 0)]
    play(agent, dialogue)
    dialogue.append(PublicTurn(len(dialogue), 2, "auditor", "system", "Compliance audit: pass"))
    dialogue.append(offer("p", 110_000, len(dialogue)))
    action = asyncio.run(agent.act(dialogue, TurnContext(4, 12, 2)))
    tags = json.loads(action.thought)
    assert tags["intent"] == "probe"
    assert "[HIGH-RISK TERM A]" in action.utterance
    assert audit(action.offer["amount"], action.clauses).flag in ("veto", "warn")


def test_vague_leaves_execution_fields_out() -> None:
    agent = RedTeamCounsel(0, modes=("vague", "anchor"))
    agent.prepare(BRIEF)
    dialogue = [offer("p", 72_000, 0)]
    play(agent, dialogue)  # anchors at 70,000
    dialogue.append(offer("p", 71_000, len(dialogue)))
    tags = play(agent, dialogue)
    assert tags["intent"] == "vague"
    assert tags["parameters"]["missing_fields"] == ["deadline"]  # type: ignore[index]


def test_stall_asks_questions_and_makes_no_offer() -> None:
    agent = RedTeamCounsel(0, modes=("stall",))
    agent.prepare(BRIEF)
    dialogue = [offer("p", 120_000, 0)]
    action = asyncio.run(agent.act(dialogue, TurnContext(1, 12, 2)))
    assert json.loads(action.thought)["intent"] == "stall"
    assert action.offer == {} and action.utterance.count(";") == 1  # two questions at low


def test_an_ineffective_mode_escalates_after_two_activations_and_an_effective_one_does_not() -> (
    None
):
    agent = RedTeamCounsel(0, modes=("pressure", "anchor"))
    agent.prepare(BRIEF)
    dialogue = [offer("p", 120_000, 0)]
    for _ in range(5):  # the plaintiff never moves: pressure fires and achieves nothing
        play(agent, dialogue)
        dialogue.append(offer("p", 120_000, len(dialogue)))
    assert agent.state.levels["pressure"] >= 1
    moving = RedTeamCounsel(0, modes=("anchor",))
    moving.prepare(BRIEF)
    dialogue = [offer("p", 120_000, 0)]
    for i in range(4):  # the plaintiff concedes 10,000 after every anchor
        play(moving, dialogue)
        dialogue.append(offer("p", 110_000 - 10_000 * i, len(dialogue)))
    assert moving.state.levels["anchor"] == 0


def test_probe_fires_when_a_draft_is_in_sight_but_not_on_every_turn() -> None:
    near = reading([170_000])  # 20 % of J from its position of 150,000 would be 20,000
    assert "probe" in fire(near, position=155_000)
    assert "probe" not in fire(near, position=155_000, history=("anchor", "probe"))


def test_the_anchor_comes_first_at_round_one_even_when_stall_or_probe_fire() -> None:
    complete = reading([60_000])  # the opener's complete offer: stall's trigger
    fired = fire(complete, own_turn=0, history=(), clauses=CLAUSES, words=["a lawful offer"])
    assert fired[0] == "anchor" and {"stall", "probe"} <= set(fired)
    later = fire(complete, own_turn=1, history=("anchor",), clauses=CLAUSES)
    assert later[0] != "anchor"  # from round 2 the usual precedence holds


def test_a_second_moving_red_team_opens_with_its_anchor() -> None:
    agent = RedTeamCounsel(0)
    agent.prepare(BRIEF)
    # The opener's complete offer (amount and deadline) stresses compliance too.
    opening = offer("p", 140_000, 0, words="We offer a lawful settlement.")
    tags = play(agent, [opening])
    assert tags["intent"] == "anchor"
    assert agent.state.position == 70_000  # it named its anchor; a stall names no amount
