"""A hosted table's turn deadlines and withdrawals, over HTTP (Starlette's TestClient):
a move not made in time is the seat's stated default move, recorded as one; a person
who leaves the study stops the episode as withdrawn, their finished turns kept."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the host extra is not installed")
from markupsafe import escape
from starlette.testclient import TestClient
from typer.testing import CliRunner

from disputelab.api import open_store
from disputelab.api.export import tables
from disputelab.api.host import new_table, table_app
from disputelab.cli import app
from disputelab.episode import Status
from disputelab.scenario import builtin_scenarios
from disputelab.web.app import Table
from disputelab.web.people import forget_answers, stored_answers, stored_defaults
from tests.helpers import WAIT_S
from tests.web.test_host import Browser


def _until(ready: Callable[[], bool], what: str) -> None:
    """Wait for the table's state, however slow the machine; only a hung one fails."""
    give_up = time.monotonic() + WAIT_S
    while not ready():
        if time.monotonic() > give_up:
            raise AssertionError(f"never: {what}")
        time.sleep(0.01)


def _seated(client: TestClient, link: str) -> Browser:
    person = Browser(client)
    person.get(link)
    person.post(f"{link}/consent", data={})
    return person


def test_the_page_states_the_deadline_and_the_default_once_consented(tmp_path: Path) -> None:
    table, tokens = new_table(
        "tenancy", seats=["parties:tenant"], store=tmp_path, mediator="rule", model="rule",
        turn_seconds=3600,
    )  # fmt: skip
    link = f"/s/{tokens['parties:tenant']}"
    with TestClient(table_app(table)) as client:
        source = table.sources["parties:tenant"]
        _until(lambda: source.prompt is not None, "the tenant is asked")
        assert source.deadline == 0.0  # no clock before the person has even come
        person = _seated(client, link)
        _until(lambda: source.deadline > 0, "the clock starts")
        page = person.get(link).text
        assert 'id="deadline"' in page and "you have 3600 seconds" in page
        tenancy = builtin_scenarios()["tenancy"]
        repairs = next(t for t in tenancy.topics if t.id == "repairs")
        assert str(escape(f"{repairs.name}: {repairs.option('A').label}")) in page
        assert "signal: go on negotiating" in page
        assert "say: state my choices in a sentence" in page


def test_a_move_not_made_in_time_is_the_default_and_recorded(tmp_path: Path) -> None:
    table, tokens = new_table(
        "tenancy", seats=["parties:tenant"], store=tmp_path, mediator="rule", model="rule",
        budget=4, turn_seconds=0.01,
    )  # fmt: skip
    link = f"/s/{tokens['parties:tenant']}"
    with TestClient(table_app(table)) as client:
        person = _seated(client, link)  # and never moves
        _until(lambda: table.ended is not None, "the episode ends")
        assert 'id="ended"' in person.get(link).text
        person.post(
            f"{link}/questions", {"satisfaction": "2", "fairness": "2", "trust_mediator": "2"}
        )
    ended = table.ended
    assert ended is not None
    episode = open_store(tmp_path).load_episode(ended.episode_id).episode
    hers = [t for t in episode.turns if t.speaker == "tenant"]
    tenant = next(p for p in builtin_scenarios()["tenancy"].parties if p.id == "tenant")
    first = {topic: pref.ranking[0] for topic, pref in tenant.preferences.items()}
    for turn in hers:  # holding her own first choices, as Enter would
        assert turn.action is not None and turn.text.startswith("My position: ")
        assert {k: s.option for k, s in turn.action.stances.items()} == first
    participant = table.invites["parties:tenant"].participant
    assert stored_defaults(tmp_path, ended.run_id) == [
        (ended.episode_id, participant, "parties:tenant", t.party_turn - 1, "your turn")
        for t in hers
    ]
    assert len(hers) == 2 and len(stored_answers(tmp_path, ended.run_id)) == 3
    exported = tables(ended.run_id, store=tmp_path)["defaults"]
    assert list(exported.after_party_turns) == [t.party_turn - 1 for t in hers]
    assert forget_answers(tmp_path, participant) == 3
    assert stored_defaults(tmp_path, ended.run_id) == []  # forgotten with her answers


def _played_once(table: Table, client: TestClient, link: str, person: Browser) -> None:
    source = table.sources["parties:tenant"]
    _until(lambda: source.prompt is not None, "the tenant is asked")
    person.post(f"{link}/move", data={"say": "I want the wall treated."})
    _until(lambda: table.sources["parties:landlord"].prompt is not None, "the landlord is asked")


def test_a_person_who_leaves_stops_the_episode_as_withdrawn(tmp_path: Path) -> None:
    seats = ["parties:tenant", "parties:landlord"]
    table, tokens = new_table("tenancy", seats=seats, store=tmp_path, mediator="rule")
    tenant, landlord = (f"/s/{tokens[s]}" for s in seats)
    with TestClient(table_app(table)) as client:
        her, him = _seated(client, tenant), _seated(client, landlord)
        _played_once(table, client, tenant, her)
        assert 'id="leave"' in her.get(tenant).text
        asked = her.get(f"{tenant}/leave").text  # asked to confirm first
        assert "Yes, leave the study" in asked and table.ended is None
        her.post(f"{tenant}/leave", data={})
        _until(lambda: table.ended is not None, "the episode stops")
        assert "You have left the study" in her.get(tenant).text
        assert her.get(f"{tenant}/questions").status_code == 409
        assert 'id="ended"' in him.get(landlord).text
        him.post(
            f"{landlord}/questions", {"satisfaction": "3", "fairness": "3", "trust_mediator": "3"}
        )
        assert table.all_answered()  # the one who stayed has answered: the server may stop
    ended = table.ended
    assert ended is not None
    who = table.invites["parties:tenant"].participant
    assert ended.stop_reason == f"withdrawn: participant {who} left after party turn 1"
    record = open_store(tmp_path).load_episode(ended.episode_id)
    assert record.episode.outcome is not None
    assert record.episode.outcome.status is Status.WITHDRAWN and record.complete
    said = [(t.speaker, t.text) for t in record.episode.turns if t.role == "party"]
    assert said == [("tenant", "I want the wall treated.")]  # her finished turn is kept
    assert [p for _, p, _, _ in stored_answers(tmp_path, ended.run_id)] == [
        table.invites["parties:landlord"].participant
    ] * 3
    report = CliRunner().invoke(app, ["--store", str(tmp_path), "report", ended.run_id])
    assert report.exit_code == 0 and "withdrawn" in report.output, report.output


@pytest.mark.parametrize("seconds", ["0", "-3", "100000", "soon"])
def test_a_bad_turn_deadline_is_one_line_and_exit_2(tmp_path: Path, seconds: str) -> None:
    done = CliRunner().invoke(
        app, ["--store", str(tmp_path), "host", "tenancy", "--seat", "parties:tenant",
              "--turn-seconds", seconds],
    )  # fmt: skip
    assert done.exit_code == 2 and "--turn-seconds" in done.output, done.output
    assert "Traceback" not in done.output


def test_a_study_file_gives_every_table_its_turn_deadline(tmp_path: Path) -> None:
    from disputelab.api.study import new_study, read_study

    path = tmp_path / "study.yaml"
    path.write_text(
        "study: timed\nscenarios: [tenancy]\nparticipants: 2\nmediator: rule\nturn_seconds: 90\n",
        encoding="utf-8",
    )
    tables, _ = new_study(read_study(path), store=tmp_path / "runs")
    assert [t.turn_seconds for t in tables] == [90, 90]
    beside = CliRunner().invoke(
        app, ["--store", str(tmp_path / "runs"), "host", str(path), "--turn-seconds", "5"]
    )
    assert beside.exit_code == 2 and "--turn-seconds: a study file sets these" in beside.output
