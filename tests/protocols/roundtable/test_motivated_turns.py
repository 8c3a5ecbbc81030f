"""Motivated turn-taking, end to end over real HTTP: a scripted local server plays every
party's thinking and ratings and the turn-taking prediction, and the roundtable must give
the floor by the selection rules."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.episode import Episode
from disputelab.experiments.episodes import run_single
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, fill
from disputelab.plan.cast import Cast
from disputelab.protocols.roundtable.turn_taking import boosted
from disputelab.store.sqlite import Store
from tests.helpers import scenario

SAY = "Let me put my view on the table."
SCENARIO = "community-centre"  # four parties: council, residents, youth, traders


class Table:
    """Plays the model: who is predicted next, and how each party rates its thoughts.

    Thoughts are written `SECRET-<party>-<n>`, so any prompt that carries another
    party's thought is easy to catch.
    """

    def __init__(self, predict: Callable[[int], str], rate: Callable[[str, int], float]) -> None:
        s = scenario(SCENARIO)
        self.names = {p.id: p.name for p in s.parties}
        self.predict = predict
        self.rate = rate
        self.predictions = 0
        self.ratings: dict[str, int] = {}

    def party_of(self, system: str) -> str:
        return next(pid for pid, name in self.names.items() if f"You are {name}" in system)

    def __call__(self, body: dict[str, Any]) -> Scripted:
        fmt = (body.get("response_format") or {}).get("json_schema") or {}
        name, schema = fmt.get("name"), fmt.get("schema") or {"type": "object"}
        system = body["messages"][0]["content"]
        # The whole exchange: a re-ask ends with the correction, not the rating prompt.
        user = "\n".join(m["content"] for m in body["messages"][1:])
        if name == "next_speaker":
            self.predictions += 1
            reply: Any = {"next": self.predict(self.predictions)}
        elif name == "thoughts":
            pid = self.party_of(system)
            reply = {
                "thoughts": [{"text": f"SECRET-{pid}-{i}", "stimuli": ["CON#0"]} for i in range(2)]
            }
        elif name == "motivation":
            m = re.search(r'private thought: "SECRET-([a-z]+)-\d"', user)
            assert m, user
            pid = m.group(1)
            self.ratings[pid] = self.ratings.get(pid, 0) + 1
            reply = {"reason": "scripted", "rating": self.rate(pid, self.ratings[pid])}
        else:
            reply = fill(schema, text=SAY)
        return Scripted(content=json.dumps(reply))


def play(tmp_path: Path, table: Table, budget: int) -> tuple[Episode, list[dict[str, Any]]]:
    with fake_openai(table, keep_alive=True) as server:
        store = Store(tmp_path)
        model = f"openai:test-model@{server.url}"
        cast = Cast({"parties": "llm", "mediator": "none"}, {"parties": model})
        hub = ModelHub(None)
        result = asyncio.run(
            run_single(
                store,
                scenario(SCENARIO),
                cast,
                1,
                "roundtable",
                {"budget": budget, "turn_taking": "motivated"},
                hub=hub,
            )
        )
        requests = list(server.requests)
    return result.episode, requests


def speakers(ep: Episode) -> list[str]:
    return [t.speaker for t in ep.turns if t.role == "party"]


def test_the_predicted_party_speaks_when_nobody_else_is_motivated(tmp_path: Path) -> None:
    table = Table(lambda n: "Nadia Rahimi", lambda pid, n: 1.5)  # below every threshold
    ep, _ = play(tmp_path, table, budget=5)
    first, *rest = [t for t in ep.turns if t.role == "party"]
    # Before anyone speaks the floor is open, and at 1.5 nobody selects a thought.
    assert first.choice is not None and first.choice.predicted == "anyone"
    assert first.choice.rule == "fallback"
    for before, turn in zip([first, *rest], rest, strict=False):
        assert turn.choice is not None
        if before.speaker == "youth":  # a prediction for the last speaker leaves it open
            assert turn.choice.predicted == "anyone" and turn.choice.rule == "fallback"
        else:
            assert turn.choice.predicted == "youth"
            assert turn.speaker == "youth" and turn.choice.rule == "predicted"
    assert "youth" in speakers(ep)


def test_an_open_floor_goes_to_a_party_at_its_threshold(tmp_path: Path) -> None:
    rates = {"council": 2.0, "residents": 3.2, "youth": 2.9, "traders": 1.0}
    table = Table(lambda n: "anyone", lambda pid, n: rates[pid])
    ep, _ = play(tmp_path, table, budget=1)
    (turn,) = ep.turns
    assert turn.speaker == "residents"  # 3.2 >= im_threshold 3.0; youth's 2.9 is not
    assert turn.choice is not None and turn.choice.rule == "self-selected"
    assert turn.choice.selected == {"residents": 3.2}
    assert turn.choice.motivation == 3.2


def test_a_motivated_party_interrupts_the_predicted_one(tmp_path: Path) -> None:
    rates = {"council": 1.2, "residents": 2.0, "youth": 4.0, "traders": 2.6}
    table = Table(lambda n: "Councillor Beatrice Ngata", lambda pid, n: rates[pid])
    ep, _ = play(tmp_path, table, budget=2)
    first, second = ep.turns
    assert first.speaker == "youth" and first.choice is not None
    assert first.choice.rule == "self-selected"  # the opening floor is open to anyone
    assert second.choice is not None and second.choice.predicted == "council"
    # council selects unconditionally (1.2); traders' 2.6 reaches interrupt_threshold
    # 2.5 and beats it; residents (2.0) stays below; youth just spoke.
    assert second.choice.selected == {"council": 1.2, "traders": 2.6}
    assert second.speaker == "traders" and second.choice.rule == "interrupted"
    assert second.choice.interrupted


def test_when_nobody_selects_the_most_salient_thought_speaks(tmp_path: Path) -> None:
    rates = {"council": 1.1, "residents": 2.6, "youth": 1.8, "traders": 2.2}
    ep, _ = play(tmp_path, Table(lambda n: "anyone", lambda pid, n: rates[pid]), budget=1)
    (turn,) = ep.turns
    assert turn.choice is not None and turn.choice.selected == {}
    assert turn.choice.rule == "fallback"
    # Everyone's salient thought competes on motivation: residents' 2.6 is highest.
    assert turn.speaker == "residents" and turn.choice.motivation == 2.6


def test_nobody_speaks_twice_in_a_row(tmp_path: Path) -> None:
    # youth is always predicted and always keenest: it still cannot take two turns running.
    rates = {"council": 2.6, "residents": 2.7, "youth": 5.0, "traders": 2.8}
    table = Table(lambda n: "Nadia Rahimi", lambda pid, n: rates[pid])
    ep, _ = play(tmp_path, table, budget=10)
    order = speakers(ep)
    assert len(order) == 10
    assert all(a != b for a, b in itertools.pairwise(order)), order
    assert order.count("youth") == 5  # every other turn


def test_silence_raises_motivation_by_one_percent_per_turn(tmp_path: Path) -> None:
    rates = {"council": 3.0, "residents": 3.0, "youth": 3.0, "traders": 3.0}
    ep, _ = play(tmp_path, Table(lambda n: "anyone", lambda pid, n: rates[pid]), budget=8)
    checked = 0
    last_spoke = {pid: 0 for pid in rates}
    for t in (t for t in ep.turns if t.role == "party"):
        assert t.choice is not None
        for pid, thoughts in t.choice.thoughts.items():
            silent = t.party_turn - 1 - last_spoke[pid]
            for th in thoughts:
                assert th.raw == 3.0
                assert th.rating == boosted(3.0, silent) == round(min(5.0, 3.0 * 1.01**silent), 1)
                checked += silent > 0 and th.rating > th.raw
        last_spoke[t.speaker] = t.party_turn
    assert checked, "some party was silent long enough for the boost to show"


def test_no_thought_reaches_another_agents_prompt(tmp_path: Path) -> None:
    rates = {"council": 3.5, "residents": 2.0, "youth": 4.5, "traders": 3.1}
    table = Table(lambda n: "anyone" if n % 2 else "Derek Fairclough", lambda p, n: rates[p])
    ep, requests = play(tmp_path, table, budget=8)
    assert any(t.choice and t.choice.thoughts for t in ep.turns)
    for body in requests:
        text = "\n".join(m["content"] for m in body["messages"])
        secrets = set(re.findall(r"SECRET-([a-z]+)-\d", text))
        fmt = (body.get("response_format") or {}).get("json_schema") or {}
        if fmt.get("name") == "next_speaker":
            assert not secrets  # the predictor hears the table, nothing private
            continue
        owner = table.party_of(body["messages"][0]["content"])
        assert secrets <= {owner}, f"{owner}'s prompt carries {secrets - {owner}}"
    for t in ep.turns:
        assert "SECRET" not in t.text  # scripted utterances never voice them verbatim


def test_calls_per_turn_grow_with_parties_and_thoughts(tmp_path: Path) -> None:
    ep, requests = play(tmp_path, Table(lambda n: "anyone", lambda p, n: 3.0), budget=4)
    per_turn = [t.choice.calls for t in ep.turns if t.choice is not None]
    # Three eligible parties each draft (1 call) and rate 2 thoughts (2 calls); the
    # opening round has all four.
    assert per_turn == [12, 9, 9, 9]
    names = [
        ((b.get("response_format") or {}).get("json_schema") or {}).get("name") for b in requests
    ]
    assert names.count("next_speaker") == 3  # nothing to predict before the first word
    assert names.count("party_action") == 4
    assert ep.usage["turn-taking"].calls == 3
    # The dry run's bound: met exactly when nothing is re-asked, the opening turn included.
    from disputelab.protocols.base import get_protocol

    proto = get_protocol("roundtable")
    bound = proto.max_calls(proto.params({"budget": 4, "turn_taking": "motivated"}), 4)
    assert bound["parties"] == sum(per_turn) + 4
    assert bound["turn-taking"] >= 3


@pytest.mark.parametrize("bad", ["loud", ""])
def test_turn_taking_takes_only_its_two_modes(bad: str) -> None:
    from disputelab.protocols.base import ParamsError, get_protocol

    with pytest.raises(ParamsError, match="turn_taking"):
        get_protocol("roundtable").params({"turn_taking": bad})


def test_thoughts_without_motivated_turn_taking_are_refused_as_they_would_change_nothing() -> None:
    from disputelab.protocols.base import ParamsError, get_protocol

    proto = get_protocol("roundtable")
    with pytest.raises(ParamsError, match="thoughts applies to motivated turn-taking only"):
        proto.params({"thoughts": 3})
    assert proto.params({"thoughts": 3, "turn_taking": "motivated"}).thoughts == 3  # type: ignore[attr-defined]
    r = CliRunner().invoke(app, ["run", "tenancy", "-P", "thoughts=3"])
    assert r.exit_code == 2
    assert r.output.startswith("error: thoughts applies to motivated turn-taking only")


def test_a_rating_that_never_fits_is_nan_never_selects_and_its_calls_still_count(
    tmp_path: Path,
) -> None:
    # 9 is off the 1-5 scale: every attempt fails validation, so each rating is asked
    # three times (the first ask and two re-asks) and then given up.
    rates = {"council": 9.0, "residents": 3.2, "youth": 3.1, "traders": 1.0}
    ep, requests = play(tmp_path, Table(lambda n: "anyone", lambda p, n: rates[p]), budget=1)
    (turn,) = ep.turns
    assert turn.choice is not None
    council = turn.choice.thoughts["council"]
    assert all(math.isnan(t.rating) for t in council)
    assert all(t.reason.startswith("rating failed") for t in council)
    assert "council" not in turn.choice.selected and turn.speaker == "residents"
    # council: 1 draft + 2 thoughts x 3 attempts; the other three: 1 draft + 2 ratings.
    assert turn.choice.calls == 7 + 3 * 3
    thinking = [
        b
        for b in requests
        if ((b.get("response_format") or {}).get("json_schema") or {}).get("name")
        in ("thoughts", "motivation")
    ]
    assert len(thinking) == turn.choice.calls


@pytest.mark.parametrize(("parties", "predictor"), [("rule", "rule"), ("llm", "llm")])
def test_the_predictor_borrows_the_parties_model_only_when_they_use_one(
    parties: str, predictor: str
) -> None:
    from disputelab.protocols.base import get_protocol

    proto = get_protocol("roundtable")
    cast = Cast({"parties": parties}, {"parties": "openai:m@http://127.0.0.1:9/v1"})
    seat = next(s for s in proto.seats if s.role == "turn-taking")
    assert cast.for_protocol(proto).seat_kind(seat) == predictor


class Mumbling(Table):
    """A predictor that never answers in JSON."""

    def __call__(self, body: dict[str, Any]) -> Scripted:
        fmt = (body.get("response_format") or {}).get("json_schema") or {}
        if fmt.get("name") == "next_speaker":
            return Scripted(content="hmm, hard to say")
        return super().__call__(body)


def test_a_prediction_that_never_fits_leaves_the_floor_open_and_is_charged(
    tmp_path: Path,
) -> None:
    rates = {"council": 3.5, "residents": 2.0, "youth": 3.2, "traders": 1.0}
    ep, _ = play(tmp_path, Mumbling(lambda n: "anyone", lambda p, n: rates[p]), budget=3)
    turns = [t for t in ep.turns if t.role == "party"]
    assert len(turns) == 3  # the episode went on
    assert all(t.choice is not None and t.choice.predicted == "anyone" for t in turns)
    assert ep.usage["turn-taking"].calls == 2 * 3  # two predictions, three attempts each
