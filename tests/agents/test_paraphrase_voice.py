"""The paraphrase party kind: the rule policy in varied words, without acceptable sets."""

from __future__ import annotations

from disputelab.agents.paraphrase.voice import PARAPHRASES
from disputelab.agents.registry import PARTY, build_parties, get_kind, has_hidden_state
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
