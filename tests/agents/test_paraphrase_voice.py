"""The paraphrase party kind: the rule policy in varied words, without acceptable sets."""

from __future__ import annotations

import asyncio
from typing import Any

from disputelab.agents.paraphrase.voice import PARAPHRASES, ParaphraseVoice
from disputelab.agents.parties.rule import RuleParty
from disputelab.agents.registry import (
    PARTY,
    build_agent,
    build_parties,
    get_kind,
    has_hidden_state,
)
from disputelab.episode import Episode
from disputelab.protocols.play import play
from disputelab.protocols.roundtable.agents import MEDIATOR
from tests.helpers import scenario


def test_every_move_has_several_paraphrases_and_none_names_alternatives() -> None:
    for move, options in PARAPHRASES.items():
        if move != "feel":
            assert len(options) >= 3, move
        assert not any("{alt}" in o for o in options)


def test_the_kind_is_registered_with_hidden_state_and_no_model() -> None:
    kind = get_kind(PARTY, "paraphrase")
    assert has_hidden_state(PARTY, "paraphrase") and not kind.needs_model
    parties = build_parties(scenario("workplace"), "paraphrase", 0)
    assert len(parties) == 3
    assert all(p.hidden_stances() for p in parties)  # what the oracle reads


def _moves(kind: str, sid: str, seed: int) -> tuple[list[Any], list[str]]:
    s = scenario(sid)
    ep = Episode(s.id, "roundtable", seed, {})
    med = build_agent(MEDIATOR, "rule", s, seed)
    parties = build_parties(s, kind, seed)
    asyncio.run(play("roundtable", s, parties, {"mediator": med}, {"budget": 40}, ep))
    moves = [
        (t.speaker, t.action.stances, t.action.signal, t.action.tone) for t in ep.turns if t.action
    ]
    return moves, [t.text for t in ep.turns if t.action]


def test_the_kind_is_the_rule_party_with_another_voice_the_same_moves_in_other_words() -> None:
    parties = build_parties(scenario("tenancy"), "paraphrase", 0)
    assert all(type(p) is RuleParty and type(p.voice) is ParaphraseVoice for p in parties)
    for sid in ("tenancy", "workplace"):
        for seed in range(3):
            rule, rule_words = _moves("rule", sid, seed)
            para, para_words = _moves("paraphrase", sid, seed)
            assert rule == para
            assert rule_words != para_words
