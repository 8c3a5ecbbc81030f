"""AgentMediation's stage ablation (its Table 13): one stage left out of the staged
protocol, the others played as usual."""

from __future__ import annotations

import asyncio

import pytest

from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Episode
from disputelab.protocols.play import play
from disputelab.protocols.staged.agents import STAGED_MEDIATOR
from tests.helpers import scenario


def run(without: str) -> Episode:
    s = scenario()
    ep = Episode(s.id, "staged", 0, {"parties": "rule", "mediator": "rule"})
    mediator = build_agent(STAGED_MEDIATOR, "rule", s, 0)
    parties = build_parties(s, "rule", 0)
    params = {"rounds": 3, "without_stage": without}
    return asyncio.run(play("staged", s, parties, {"mediator": mediator}, params, ep))


def stages(ep: Episode, role: str) -> set[str]:
    return {t.stage for t in ep.turns if t.role == role}


def test_the_full_session_has_every_stage() -> None:
    ep = run("none")
    assert stages(ep, "mediator") == {"statement", "option", "bargaining", "closure"}


@pytest.mark.parametrize("stage", ["statement", "option"])
def test_a_left_out_stage_has_no_turns(stage: str) -> None:
    ep = run(stage)
    assert stage not in stages(ep, "mediator") | stages(ep, "party")
    assert "closure" in stages(ep, "mediator")
    assert ep.outcome is not None and ep.outcome.status.value != "incomplete"


def test_without_closure_the_parties_judge_the_initial_proposal() -> None:
    ep = run("closure")
    assert "closure" not in stages(ep, "mediator")
    initial = next(t for t in ep.turns if t.stage == "option").intervention
    verdicts = [t for t in ep.turns if t.action is not None and t.action.verdict is not None]
    assert len(verdicts) == len(scenario().parties)
    accepted = [t for t in verdicts if t.action.verdict.decision == "accept"]
    for t in accepted:  # an accepting party backs exactly the package it was shown
        assert {k: s.option for k, s in t.action.stances.items()} == initial.proposal
