"""The rule recaster: what it reads from a seed, what it assumes, and that it says which.

Each test states one rule of `disputelab.curation.rules` on a seed written for it; the
last holds the recaster to its contract on any text: a valid scenario or a one-line
RecastFailed, never a crash.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from disputelab.curation import RecastFailed, Seed, read_seed_file, rule_recast
from disputelab.curation.library import ROLE_WORDS, TOPICS
from disputelab.curation.rules import read_money
from disputelab.scenario.schema import Scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str) -> Scenario:
    folder = "curation-checks" if name == "shared-workshop" else "curation-seeds"
    (seed,) = read_seed_file(EXAMPLES / folder / f"{name}.txt")
    return rule_recast(seed)


def recast_text(text: str, domain: str | None = None) -> Scenario:
    return rule_recast(Seed("s", text.splitlines()[0], text, "test", domain))


def said(s: Scenario, kind: str) -> list[str]:
    return [line.removeprefix(f"{kind}: ") for line in s.assumptions if line.startswith(kind)]


def test_parties_are_the_role_words_with_the_plain_words_before_them() -> None:
    s = example("clinic-closure")
    assert [(p.name, p.role) for p in s.parties] == [
        ("Regional health trust", "respondent (trust)"),
        ("Residents' group", "claimant (group)"),
        ("Nurses' union", "claimant (union)"),
        ("Town council", "authority (council)"),
    ]
    assert 'party "Town council", authority, from the role word "council"' in said(s, "inferred")


def test_someone_s_customers_are_not_a_party_nor_is_a_role_word_used_as_a_verb() -> None:
    s = recast_text(
        "Boiler row\nA retailer sold a faulty boiler to a buyer. The retailer says its "
        "customers never complained, and refused a refund. The buyer no longer trusts the "
        "retailer's own new service."
    )
    assert [p.name for p in s.parties] == ["Retailer", "Buyer"]


def test_a_role_word_that_does_not_tell_the_side_takes_the_one_left_and_says_so() -> None:
    s = example("software-licence")
    assert [(p.name, p.role) for p in s.parties] == [
        ("Mid-sized logistics firm", "claimant (firm)"),
        ("Vendor", "respondent (vendor)"),
    ]
    assert any(
        line.startswith('"Mid-sized logistics firm" is the claimant: its role word "firm"')
        for line in said(s, "assumed")
    )


def test_a_seed_that_names_no_party_gets_the_library_s_stand_ins_marked_assumed() -> None:
    s = example("shared-workshop")
    assert [p.name for p in s.parties] == ["The complaining party", "The other party"]
    assumed = said(s, "assumed")
    assert 'party "The complaining party": the seed names no claimant' in assumed
    assert 'party "The other party": the seed names no respondent' in assumed


def test_the_largest_sum_of_money_the_seed_states_prices_the_money_topic() -> None:
    s = example("flat-deposit")
    labels = [o.label for o in s.topic("COMPENSATION").options]
    assert labels == ["£1,800 in full", "£1,350", "£900", "Nothing"]
    assert "options of COMPENSATION are shares of £1,800, from the seed" in said(s, "inferred")


def test_sums_are_read_with_their_currency_and_size() -> None:
    assert read_money("a claim of $2.5 million, of which $40,000 is costs") is not None
    big = read_money("a claim of $2.5 million, of which $40,000 is costs")
    assert big is not None and big.times(0.5) == "$1.25 million"
    euros = read_money("owes 1,200 euros and 300 euros more")
    assert euros is not None and euros.times(0.75) == "900 euros"
    assert read_money("a town of 30,000 people, 40 minutes away") is None


def test_without_a_sum_the_money_options_are_words_and_that_is_marked_assumed() -> None:
    s = example("river-discharge")
    assert s.topic("COMPENSATION").options[0].label == "Full compensation for the losses claimed"
    assert "options of COMPENSATION in words, not sums: the seed states no sum" in said(
        s, "assumed"
    )


def test_topics_are_the_ones_the_seed_calls_up_at_most_four() -> None:
    s = example("river-discharge")
    assert [t.id for t in s.topics] == ["REMEDY", "APOLOGY", "COMPENSATION", "OVERSIGHT"]
    assert "topic JOBS left out: at most 4 topics" in said(s, "inferred")


def test_a_seed_that_calls_up_fewer_than_two_topics_gets_its_domain_s_defaults() -> None:
    s = recast_text("Shop row\nA buyer and a seller fell out over a refund.", "transactional")
    assert [t.id for t in s.topics] == ["COMPENSATION", "APOLOGY"]
    assert "topic APOLOGY, a default of the transactional domain" in said(s, "assumed")
    assert "domain transactional, as the seed file gives it" in said(s, "inferred")


def test_opposed_sides_rank_one_list_both_ways_and_refuse_each_other_s_favourite() -> None:
    s = example("software-licence")
    firm, vendor = s.parties
    assert firm.preferences["CONTRACT"].model_dump() == {
        "ranking": ["A", "B", "C"],
        "unacceptable": ["D"],
    }
    assert vendor.preferences["CONTRACT"].model_dump() == {
        "ranking": ["D", "C", "B"],
        "unacceptable": ["A"],
    }
    # An apology is charged: nothing is unacceptable, so it cannot make the case hopeless.
    assert firm.preferences["APOLOGY"].unacceptable == []
    assert firm.persona.strategy == "competing" and firm.persona.reactivity == 0.8


def test_words_of_accord_and_none_of_conflict_put_the_middle_options_first() -> None:
    s = example("shared-workshop")
    rankings = {p.preferences[t.id].ranking[0] for p in s.parties for t in s.topics}
    assert rankings == {"B"}


def test_a_party_weighs_up_the_topics_its_sentences_name() -> None:
    s = example("clinic-closure")
    union = s.party("nurses-union")
    group = s.party("residents-group")
    assert union.weights["JOBS"] > group.weights["JOBS"]
    assert '"Nurses\' union" weighs up JOBS (+2)' in " ".join(said(s, "inferred"))


def test_every_provenance_line_says_whether_it_was_read_or_assumed() -> None:
    for name in ("clinic-closure", "flat-deposit", "river-discharge", "software-licence"):
        s = example(name)
        head, *lines = s.assumptions
        assert head.startswith("recast by rules (template library 1), no model")
        assert lines and all(line.startswith(("inferred: ", "assumed: ")) for line in lines)
        for p in s.parties:  # the fallback always comes from the template, and says so
            assert any(line.startswith(f'assumed: "{p.name}" falls back') for line in lines)


WORDS = [
    *(r.word for r in ROLE_WORDS),
    *(k.rstrip("$") for t in TOPICS for k in t.keywords),
    "the",
    "a",
    "its",
    "and",
    "agreed",
    "refused",
    "£1,200",
    "$3 million",
    ".",
    "\n\n",
    "'s",
    "residents'",
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(WORDS) | st.text(min_size=1, max_size=8), min_size=1))
def test_any_text_makes_a_valid_scenario_or_a_one_line_refusal(words: list[str]) -> None:
    text = " ".join(words).strip() or "x"
    try:
        s = recast_text(text)
    except RecastFailed as exc:
        assert "\n" not in exc.reason
        return
    again = Scenario.model_validate(s.model_dump())
    assert 2 <= len(again.parties) <= 4 and 2 <= len(again.topics) <= 4
