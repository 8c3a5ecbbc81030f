"""Conditions change exactly one part of a scenario, and bad ones get a one-line error."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario.conditions import (
    SOCRATES_CONDITIONS,
    ConditionError,
    apply_condition,
    draw_strategy_party,
    hofstede,
)
from tests.helpers import scenario


@pytest.mark.parametrize("sid", ["tenancy", "workplace", "community-centre"])
@pytest.mark.parametrize("condition", SOCRATES_CONDITIONS)
def test_all_fifteen_socrates_conditions_give_valid_scenarios(sid: str, condition: str) -> None:
    s = scenario(sid)
    out = apply_condition(s, condition)
    assert out.topics == s.topics
    assert s == scenario(sid), "the original is left untouched"


def test_posture_sets_background_and_every_persona() -> None:
    s = apply_condition(scenario("workplace"), "posture:avoiding")
    assert "sidesteps open conflict" in s.background
    assert {p.persona.strategy for p in s.parties} == {"avoiding"}


def test_strategy_one_changes_exactly_one_party_and_all_changes_all() -> None:
    base = scenario("community-centre")
    one = apply_condition(base, "strategy:compromising@one")
    assert one.parties == base.parties, "the party is drawn per episode, not per cell"
    assert one.drawn_strategy is not None and one.drawn_strategy.strategy == "compromising"
    played = draw_strategy_party(one, seed=0)
    changed = [
        a for a, b in zip(played.parties, base.parties, strict=True) if a.persona != b.persona
    ]
    assert [p.id for p in changed] == [played.drawn_strategy.party]  # type: ignore[union-attr]
    assert changed[0].persona.strategy == "compromising"
    every = apply_condition(base, "strategy:competing@all")
    assert {p.persona.strategy for p in every.parties} == {"competing"}


def test_reactivity_pairs() -> None:
    s = apply_condition(scenario("tenancy"), "reactivity:com-react")
    assert [p.persona.reactivity for p in s.parties] == [0.0, 1.0]


def test_culture_uses_the_cited_hofstede_scores() -> None:
    s = apply_condition(scenario("tenancy"), "culture:US-KR")
    us, kr = (p.persona.culture for p in s.parties)
    assert us is not None and kr is not None
    assert (us.individualism, kr.uncertainty_avoidance, kr.long_term_orientation) == (91, 85, 100)
    assert set(hofstede()) == {"US", "CN", "KR"}


def test_an_extra_party_is_valid_distinct_and_fits_the_weights_rule() -> None:
    base = scenario("workplace")
    s = apply_condition(base, "parties:+1")
    assert len(s.parties) == len(base.parties) + 1
    new = s.parties[-1]
    assert sum(new.weights.values()) == 100
    assert all(new.preferences[t.id].ranking for t in s.topics)


def test_an_extra_party_needs_topics_and_says_so() -> None:
    with pytest.raises(ConditionError, match="settle-gym-slip negotiates numeric terms only"):
        apply_condition(scenario("settle-gym-slip"), "parties:+1")


def test_history_grows_about_fivefold() -> None:
    base = scenario("tenancy")
    s = apply_condition(base, "history:x5")
    assert len(s.history) >= 3 * len(base.history)
    assert s.background == base.background


def test_conditions_compose_with_commas() -> None:
    s = apply_condition(scenario("tenancy"), "posture:competing,culture:CN-CN")
    assert {p.persona.strategy for p in s.parties} == {"competing"}
    assert {p.persona.culture.name for p in s.parties if p.persona.culture} == {"China"}


@pytest.mark.parametrize(
    "spec",
    [
        "posture:competing,posture:avoiding",
        "culture:US-CN,posture:competing,culture:KR-KR",
        "strategy:avoiding@one,strategy:competing@one",
        "strategy:avoiding@one,strategy:competing@all",
        "strategy:avoiding@all,strategy:avoiding@one",  # the same mode again changes nothing
        "expertise:ek-top3,expertise:ek-top5",
        "parties:+1,parties:+1",
        "cause:legal,cause:legal@2",
    ],
)
def test_two_conditions_of_one_kind_in_a_cell_are_refused_not_overridden(spec: str) -> None:
    with pytest.raises(ConditionError, match="keep one of them per cell"):
        apply_condition(scenario("tenancy"), spec)
    result = CliRunner().invoke(app, ["run", "tenancy", "--condition", spec])
    assert result.exit_code == 2
    assert "the second would override or repeat the first" in " ".join(result.output.split())


def test_one_cause_twice_is_pointed_to_the_intensity() -> None:
    with pytest.raises(ConditionError, match="one cause twice is an intensity: cause:CATEGORY@"):
        apply_condition(scenario("tenancy"), "cause:legal,cause:legal@2")


def test_a_malformed_repeat_is_named_as_malformed_not_as_a_clash() -> None:
    with pytest.raises(ConditionError) as caught:
        apply_condition(scenario("tenancy"), "posture:competing,posture:bogus")
    assert str(caught.value).startswith("posture:bogus: use one of"), caught.value


def test_conditions_of_one_kind_that_add_up_may_share_a_cell() -> None:
    s = apply_condition(scenario("tenancy"), "cause:legal,cause:resource")
    assert sum("Cause of the dispute" in line for line in s.background.splitlines()) == 2
    mixed = apply_condition(scenario("tenancy"), "strategy:avoiding@all,strategy:competing@one")
    played = draw_strategy_party(mixed, seed=3)
    assert sorted(p.persona.strategy for p in played.parties) == ["avoiding", "competing"]


def test_general_may_repeat_as_it_changes_nothing() -> None:
    s = apply_condition(scenario("tenancy"), "general,posture:competing,general")
    assert {p.persona.strategy for p in s.parties} == {"competing"}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("vibes:high", "unknown condition 'vibes'; available: general, posture:"),
        ("posture:angry", "posture:angry: use one of competing, avoiding, accommodating"),
        ("strategy:competing", "use strategy:MODE@one or strategy:MODE@all"),
        ("culture:US-FR", "culture:US-FR: use culture:A-B with A and B among US, CN, KR"),
        ("reactivity:hot", "reactivity:hot: use one of com-com, com-react, react-react"),
    ],
)
def test_bad_conditions_name_the_valid_ones(bad: str, message: str) -> None:
    with pytest.raises(ConditionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        apply_condition(scenario("tenancy"), bad)
    result = CliRunner().invoke(app, ["run", "tenancy", "--condition", bad])
    assert result.exit_code == 2 and message in " ".join(result.output.split())


def test_a_run_records_its_condition(tmp_path: object) -> None:
    r = CliRunner().invoke(
        app,
        [
            "--store",
            str(tmp_path),
            "run",
            "tenancy",
            "--condition",
            "reactivity:react-react",
            "--budget",
            "10",
        ],
    )
    assert r.exit_code == 0, r.output
    rows = (
        CliRunner()
        .invoke(app, ["--store", str(tmp_path), "report", "last", "--format", "csv"])
        .output
    )
    assert "reactivity:react-react" in rows


def test_conditions_list_shows_the_fifteen() -> None:
    r = CliRunner().invoke(app, ["conditions", "list"])
    assert r.exit_code == 0 and "culture:CN-KR" in r.output


def test_an_empty_condition_is_refused_as_input_but_read_back_from_old_runs() -> None:
    # Runs stored before the rule may name "" or a trailing comma; reports still read them.
    from disputelab.scenario.conditions import ConditionError, apply_condition
    from disputelab.scenario.conditions import condition_parameters as moved
    from disputelab.scenario.library import builtin_scenario

    with pytest.raises(ConditionError, match="empty"):
        apply_condition(builtin_scenario("tenancy"), "posture:competing,")
    assert moved("posture:competing,") == moved("posture:competing")
    assert moved("") == moved("general") == ()
