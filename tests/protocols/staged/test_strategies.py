"""Strategy points in the staged protocol: a mode's name and its point play the same
episode, the adaptive update moves and records each party's point per round, and the one
party of strategy:...@one is drawn from the episode's seed."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest

from disputelab import api
from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Episode
from disputelab.protocols.base import get_protocol
from disputelab.protocols.play import play as play_protocol
from disputelab.protocols.staged.agents import STAGED_MEDIATOR
from disputelab.scenario.conditions import ConditionError, apply_condition, draw_strategy_party
from disputelab.scenario.schema import Scenario
from disputelab.scenario.tki import MODE_POINTS, adapt
from tests.helpers import scenario


def play(s: Scenario, seed: int = 0, rounds: int = 5, **params: Any) -> Episode:
    s = draw_strategy_party(s, seed)
    ep = Episode(s.id, "staged", seed, {"parties": "rule", "mediator": "rule"})
    mediator = build_agent(STAGED_MEDIATOR, "rule", s)
    return asyncio.run(
        play_protocol(
            "staged",
            s,
            build_parties(s, "rule", seed),
            {"mediator": mediator},
            {"rounds": rounds, **params},
            ep,
        )
    )


def record(ep: Episode) -> list[dict[str, Any]]:
    """The episode as stored, but for the time each turn took."""
    turns = [t.to_dict() for t in ep.turns]
    for t in turns:
        t["latency_s"] = 0.0
    return [*turns, ep.outcome.to_dict() if ep.outcome else {}]


def at_points(s: Scenario) -> Scenario:
    """The scenario with every persona's mode written as that mode's point."""
    out = s.model_copy(deep=True)
    for p in out.parties:
        p.persona.place(MODE_POINTS[p.persona.strategy])
    return out


@pytest.mark.parametrize("sid", ["community-centre", "tenancy", "workplace"])
def test_a_modes_point_plays_the_very_episode_its_name_plays(sid: str) -> None:
    named = scenario(sid)
    pointed = at_points(named)
    assert all(p.persona.assertiveness is not None for p in pointed.parties)
    for seed in (0, 1):
        assert record(play(pointed, seed)) == record(play(named, seed))


@pytest.mark.parametrize("mode", ["competing", "avoiding", "accommodating"])
def test_a_mode_as_a_point_in_the_condition_plays_as_the_mode(mode: str) -> None:
    a, c = MODE_POINTS[mode]
    by_name = apply_condition(scenario("tenancy"), f"strategy:{mode}@all")
    by_point = apply_condition(scenario("tenancy"), f"strategy:a{a:g}c{c:g}@all")
    assert {p.persona.strategy for p in by_point.parties} == {mode}
    assert record(play(by_point, 2)) == record(play(by_name, 2))


def test_a_point_between_modes_plays_a_behaviour_of_its_own() -> None:
    s = scenario("community-centre")
    between = apply_condition(s, "strategy:a8c4@all")
    assert {p.persona.point for p in between.parties} == {(8.0, 4.0)}
    assert {p.persona.strategy for p in between.parties} == {"compromising"}
    neighbours = [apply_condition(s, f"strategy:{m}@all") for m in ("competing", "compromising")]
    ours = record(play(between))
    assert all(ours != record(play(n)) for n in neighbours)


@pytest.mark.parametrize("bad", ["a11c2@all", "a5@all", "ac@one", "a5c5@some"])
def test_a_malformed_point_is_one_clear_condition_error(bad: str) -> None:
    with pytest.raises(ConditionError, match="aAcC"):
        apply_condition(scenario("tenancy"), f"strategy:{bad}")


def points_by_round(ep: Episode) -> dict[str, list[tuple[float, float]]]:
    out: dict[str, list[tuple[float, float]]] = {}
    for t in ep.turns:
        if t.role == "party" and t.stage in ("statement", "bargaining") and t.action:
            assert t.action.strategy is not None, "every party turn carries its point"
            out.setdefault(t.speaker, []).append(t.action.strategy)
    return out


def test_adaptive_points_move_each_round_by_the_rule_and_are_recorded() -> None:
    s = apply_condition(scenario("tenancy"), "strategy:avoiding@all,strategy_update:adaptive")
    ep = play(s, rounds=6)
    points = points_by_round(ep)
    assert set(points) == {p.id for p in s.parties}
    for seen in points.values():
        assert seen[0] == MODE_POINTS["avoiding"], "the statement is played from the start"
        assert all(0 <= a <= 10 and 0 <= c <= 10 for a, c in seen)
    assert any(len(set(seen)) > 1 for seen in points.values()), "some point moved"


def test_static_strategies_record_nothing_and_rate_0_keeps_every_point() -> None:
    static = play(apply_condition(scenario("tenancy"), "strategy:avoiding@all"))
    assert all(t.action is None or t.action.strategy is None for t in static.turns)
    s = apply_condition(scenario("tenancy"), "strategy:avoiding@all,strategy_update:adaptive")
    still = play(s, behaviour={"adaptive.rate": 0.0})
    assert all(set(seen) == {MODE_POINTS["avoiding"]} for seen in points_by_round(still).values())
    # ... and then plays as the static episode does, turn for turn, but for the record.
    for ours, theirs in zip(still.turns, static.turns, strict=True):
        assert ours.text == theirs.text and ours.speaker == theirs.speaker


def test_adaptive_moves_follow_the_update_function() -> None:
    s = apply_condition(scenario("tenancy"), "strategy:competing@all,strategy_update:adaptive")
    ep = play(s, rounds=5)
    points = points_by_round(ep)
    for seen in points.values():
        for before, after in itertools.pairwise(seen):
            # Each move is the update at rate 0.5 towards some point of the square: so the
            # move's target, before + 2·(after - before), lies on it.
            target = tuple(b + 2 * (a - b) for a, b in zip(after, before, strict=True))
            assert all(-1e-9 <= x <= 10 + 1e-9 for x in target)
            assert adapt(before, target, 0.5) == pytest.approx(after)


def test_the_view_shows_each_party_turns_strategy_point() -> None:
    s = apply_condition(scenario("tenancy"), "strategy:avoiding@all,strategy_update:adaptive")
    ep = play(s)
    view = get_protocol("staged").episode_view(ep)
    notes = [n for t in view.turns for n in t.notes if n[0] == "strategy"]
    assert notes and notes[0][1] == "a=0 c=0 (avoiding)"


def test_the_one_party_is_drawn_from_the_episode_seed_and_recorded() -> None:
    cell = apply_condition(scenario("tenancy"), "strategy:competing@one")
    drawn = {seed: draw_strategy_party(cell, seed).drawn_strategy for seed in range(24)}
    parties = {d.party for d in drawn.values() if d is not None}
    assert parties == {p.id for p in cell.parties}, "across seeds every party is drawn"
    for seed in (0, 5, 11):
        again = draw_strategy_party(cell, seed)
        assert again.drawn_strategy == drawn[seed], "the same seed draws the same party"
        chosen = again.party(again.drawn_strategy.party or "")
        assert chosen.persona.strategy == "competing"
    assert draw_strategy_party(draw_strategy_party(cell, 0), 1) == draw_strategy_party(cell, 0)


def test_the_stored_episode_names_the_drawn_party_and_each_rounds_points(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    condition = "strategy:avoiding@one,strategy_update:adaptive"
    drawn = set()
    for seed in range(6):
        result = api.run("tenancy", store=store, protocol="staged", condition=condition, seed=seed)
        st = api.open_store(store, writable=False)
        rec = st.load_episode(result.episode_id)
        st.close()
        party = rec.scenario["drawn_strategy"]["party"]
        drawn.add(party)
        points = points_by_round(rec.episode)
        assert points[party][0] == MODE_POINTS["avoiding"]
        assert len(points[party]) == 1 + sum(
            t.stage == "bargaining" and t.speaker == party for t in rec.episode.turns
        )
    assert len(drawn) == 2, "six seeds drew both parties of tenancy"


def test_the_report_sets_static_against_dynamic_and_shows_points_by_round(
    tmp_path: Path,
) -> None:
    spec = {
        "name": "am-dynamic",
        "protocol": "staged",
        "scenarios": ["tenancy", "workplace"],
        "conditions": [
            "strategy:avoiding@all",
            "strategy:avoiding@all,strategy_update:adaptive",
            "strategy:competing@one",
        ],
        "mediators": ["rule"],
        "rounds": 4,
        "replicates": 2,
    }
    result = api.experiment(spec, store=tmp_path / "store")
    assert result.failed == 0
    tables = result.tables()
    dynamic = tables.split("## Dynamic strategies, mediator rule (AgentMediation Tables 16-17)")[1]
    rows = [line for line in dynamic.split("## ")[0].splitlines() if line.startswith("| Avoiding")]
    assert len(rows) == 1 and rows[0].endswith("| 4 |"), rows  # 4 episodes in each
    points = tables.split("## Strategy points by round")[1].split("## ")[0]
    lines = [line for line in points.splitlines() if line.startswith("| strategy:")]
    whose = {line.split("|")[3].strip() for line in lines}
    assert whose == {"every party", "drawn", "others"}
    adaptive = next(line for line in lines if "adaptive" in line)
    cells = [c.strip() for c in adaptive.split("|")[4:-1]]
    assert cells[0] == "0.0/0.0" and len(cells) == 5, "statement, then rounds 1-4"
    assert "strategy:avoiding@all |" not in points, "a static cell records no points"


def test_general_parties_have_no_strategy_to_set_or_move(tmp_path: Path) -> None:
    def texts(condition: str) -> list[str]:
        result = api.run(
            "tenancy",
            store=tmp_path / "store",
            protocol="staged",
            condition=condition,
            params={"party_style": "general"},
        )
        turns = result.episode.turns
        assert all(t.action is None or t.action.strategy is None for t in turns)
        return [t.text for t in turns]

    base = texts("general")
    assert texts("strategy:a8c1@all") == base
    assert texts("strategy:avoiding@all,strategy_update:adaptive") == base
