"""Violations are phrases a listener can hear again; the rule buyer's offence, trust
and walk-out follow its named traits; the template remediator repairs by style."""

from __future__ import annotations

import asyncio
import random

import pytest

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.episode import Signal
from disputelab.protocols.bilateral.agents.exemplars import STYLES, ZERO_SHOT, Exemplar
from disputelab.protocols.bilateral.agents.market import Market, amounts_in
from disputelab.protocols.bilateral.agents.norms import (
    CATEGORIES,
    INTENSITY_SHARE,
    PHRASES,
    SEVERITY,
    read_tone,
    strip_phrases,
)
from disputelab.protocols.bilateral.agents.remediators import TemplateRemediator, template_rewrite
from disputelab.protocols.bilateral.agents.rule import (
    BuyerTraits,
    RuleBargainer,
    relational_readout,
)
from tests.helpers import scenario


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_phrase_is_heard_as_its_category_at_its_intensity(category: str) -> None:
    for intensity, bank in PHRASES[category].items():  # type: ignore[index]
        for phrase in bank:
            tone = read_tone(f"Well. {phrase} $40 it is.")
            share = INTENSITY_SHARE[intensity]  # type: ignore[index]
            assert tone.offence == {category: pytest.approx(SEVERITY[category] * share)}  # type: ignore[index]
            assert read_tone(strip_phrases(phrase + " $40.")).total_offence == 0


def test_amounts_are_read_with_thousands_separators() -> None:
    assert amounts_in("from $700,000 to $650,500.5 per unit") == [700000.0, 650500.5]
    m = Market.of(scenario("housing-rent"))
    assert m.money(650000) == "$650,000" and m.seller == "seller"
    assert Market.of(scenario("salary")).seller == "candidate"  # the higher target sells


def _turn(i: int, speaker: str, text: str) -> PublicTurn:
    return PublicTurn(i, i + 1, speaker, "party", text)


def test_the_rule_buyer_walks_out_once_its_anger_passes_the_threshold() -> None:
    sc = scenario("product-sale")
    insult = "Only an amateur would make an offer that feeble. $50 per unit is my price."
    calm = RuleBargainer(sc, "buyer", 0, BuyerTraits(offence_sensitivity=1.0, quit_threshold=1.2))
    touchy = RuleBargainer(sc, "buyer", 0, BuyerTraits(offence_sensitivity=1.5, quit_threshold=1.2))
    dialogue = [_turn(0, "seller", insult)]
    ctx = TurnContext(1, 20, 2)
    assert asyncio.run(calm.act(dialogue, ctx)).signal is Signal.CONTINUE  # anger 1.0
    assert asyncio.run(touchy.act(dialogue, ctx)).signal is Signal.WALK_AWAY  # anger 1.5


def test_offence_lowers_trust_and_warmth_raises_it_by_the_named_rates() -> None:
    sc = scenario("product-sale")
    traits = BuyerTraits(offence_sensitivity=1.0)
    b = RuleBargainer(sc, "buyer", 0, traits)
    asyncio.run(
        b.act(
            [_turn(0, "seller", "Our margin has to come first here. $50.")], TurnContext(1, 20, 2)
        )
    )
    assert b.trust == pytest.approx(-traits.trust_per_offence * 0.25)
    warm = RuleBargainer(sc, "buyer", 0, traits)
    text = "I am sorry, I put that badly. Our price is $50."
    asyncio.run(warm.act([_turn(0, "seller", text)], TurnContext(1, 20, 2)))
    assert warm.trust == pytest.approx(traits.trust_per_warmth * 0.3)


def test_the_relational_read_out_adds_the_outcome_and_a_dead_zone() -> None:
    state = "[state trust=0.050 relationship=0.000 anger=0.000]"
    read = relational_readout(state, deal=True, walked_out=False)
    assert read is not None and (read.trust, read.relationship) == (0, 1)
    walked = relational_readout(state, deal=False, walked_out=True)
    assert walked is not None and walked.relationship == -1
    assert relational_readout("no state here", True, False) is None


def test_the_buyer_sensitivity_defaults_to_twice_its_persona_reactivity() -> None:
    sc = scenario("product-sale")
    sc.party("buyer").persona.reactivity = 0.35
    assert RuleBargainer(sc, "buyer", 0).traits.offence_sensitivity == pytest.approx(0.7)


def test_a_rewrite_keeps_residual_offence_by_style_and_a_concession_moves_the_price() -> None:
    m = Market.of(scenario("product-sale"))
    said = "Only an amateur would make an offer that feeble. $50 per unit is my price."
    rng = random.Random(0)
    generic = template_rewrite(said, "insulting", ZERO_SHOT, m, 30.0, rng)
    assert read_tone(generic).offence == {"insulting": pytest.approx(0.5)}  # mild remains
    kind = template_rewrite(said, "insulting", STYLES["alternatives"], m, 30.0, rng)
    assert read_tone(kind).total_offence == 0 and read_tone(kind).warmth == pytest.approx(1.5)
    assert amounts_in(kind)[-1] == 50
    conceded = template_rewrite(said, "insulting", STYLES["concede"], m, 30.0, rng)
    assert amounts_in(conceded)[-1] == pytest.approx(50 - 0.3 * 20)


def test_the_template_remediator_imitates_only_exemplars_of_the_violations_category() -> None:
    sc = scenario("product-sale")
    said = "Only an amateur would make an offer that feeble. $50 per unit is my price."
    dialogue = [_turn(0, "buyer", "I can offer $30 per unit."), _turn(1, "seller", said)]
    other = Exemplar("x", "s", "culture", (), "v", "r", "alternatives")
    same = Exemplar("y", "s", "insulting", (), "v", "r", "alternatives")
    for exemplars, expect in (([other], "generic"), ([other, same], "alternatives")):
        rem = TemplateRemediator(sc, 0, "set")
        rem.prepare("set", (), exemplars, 8, False)
        out = asyncio.run(rem.remediate(dialogue, said, "insulting", TurnContext(2, 20, 2)))
        assert out.how.startswith(f"template {expect}")
        assert out.exemplar_ids == tuple(e.id for e in exemplars)
