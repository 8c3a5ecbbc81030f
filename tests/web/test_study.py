"""A hosted study: participants assigned balanced over scenarios and seats by permuted
blocks, the assignment recorded before anyone joins, one link per participant that opens
only its own episode, each episode stored as an ordinary one and its row naming it."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("starlette", reason="the host extra is not installed")
from starlette.testclient import TestClient

from disputelab.api import open_store
from disputelab.api.stores import forget_participant
from disputelab.api.study import StudyError, is_study_file, new_study, read_study
from disputelab.web.app import tables_app
from disputelab.web.study import balanced_slots, stored_assignments
from tests.web.test_host import Browser, _wait_for_form

SEATS = st.dictionaries(
    st.sampled_from(["s1", "s2", "s3", "s4"]),
    st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True),
    min_size=1,
)


@settings(max_examples=200, deadline=None)
@given(SEATS, st.integers(1, 60), st.integers(0, 10_000))
def test_no_scenario_or_seat_is_given_more_than_once_more_than_another(
    seats: dict[str, list[str]], n: int, seed: int
) -> None:
    slots = balanced_slots(seats, n, seed)
    assert [s.position for s in slots] == list(range(1, n + 1))
    per_scenario = Counter(s.scenario for s in slots)
    counts = [per_scenario.get(sc, 0) for sc in seats]
    assert max(counts) - min(counts) <= 1
    for scenario, its_seats in seats.items():
        per_seat = Counter(s.seat for s in slots if s.scenario == scenario)
        assert (
            max(per_seat.get(x, 0) for x in its_seats) - min(per_seat.get(x, 0) for x in its_seats)
            <= 1
        )
    assert len({s.seed for s in slots}) == n  # no two participants replay one draw
    assert balanced_slots(seats, n, seed) == slots  # seeded: the same draw again


def test_the_order_is_drawn_not_fixed() -> None:
    seats = {"s1": ["a"], "s2": ["a"], "s3": ["a"]}
    orders = {tuple(s.scenario for s in balanced_slots(seats, 3, seed)) for seed in range(20)}
    assert len(orders) > 1


def _study(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(body, encoding="utf-8")
    return path


PILOT = """\
study: pilot
scenarios: [tenancy, workplace]
seat: parties
participants: 3
mediator: rule
budget: 4
questionnaire: [{key: fair, text: The process was fair to me.}]
"""


def test_each_participant_plays_their_own_episode_and_the_rows_name_it(tmp_path: Path) -> None:
    store = tmp_path / "runs"
    spec = read_study(_study(tmp_path, PILOT))
    tables, tokens = new_study(spec, store=store)
    recorded = stored_assignments(store, "pilot")
    assert [a.slot.position for a in recorded] == [1, 2, 3]  # kept before anyone joins
    assert Counter(a.slot.scenario for a in recorded) in (
        Counter({"tenancy": 2, "workplace": 1}),
        Counter({"tenancy": 1, "workplace": 2}),
    )
    links = [f"/s/{t}" for t in tokens.values()]
    with TestClient(tables_app(tables)) as client:
        for link in links:
            _play_to_the_end(Browser(client), link)
    done = {a.participant: a for a in stored_assignments(store, "pilot")}
    db = open_store(store)
    for table in tables:
        (invite,) = table.invites.values()
        row = done[invite.participant]
        assert table.ended is not None and row.episode == table.ended.episode_id
        episode = db.load_episode(row.episode).episode
        assert (episode.scenario_id, episode.seed) == (row.slot.scenario, row.slot.seed)
        assert row.stop
    # Deleting one person's data deletes their row too.
    who = recorded[0].participant
    forget_participant(who, store=store)
    assert who not in {a.participant for a in stored_assignments(store, "pilot")}


def _play_to_the_end(browser: Browser, link: str) -> None:
    """Agree, take the default move whenever asked, then answer the questionnaire."""
    assert "Before you take your seat" in browser.get(link).text
    browser.post(f"{link}/consent", data={})
    for _ in range(100):
        page = _wait_for_form(browser.client, link)
        if 'id="ended"' in page:
            break
        browser.post(f"{link}/move", data={})
    else:
        raise AssertionError("the episode did not end")
    browser.post(f"{link}/questions", data={"fair": "4"})


def test_a_link_opens_only_its_own_episode(tmp_path: Path) -> None:
    tables, tokens = new_study(read_study(_study(tmp_path, PILOT)), store=tmp_path / "runs")
    with TestClient(tables_app(tables)) as client:
        pages = [Browser(client).get(f"/s/{t}") for t in tokens.values()]
        assert all(p.status_code == 200 for p in pages)
        assert client.get("/s/not-a-token").status_code == 403


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("study: x\nscenarios: [tenancy]\n", "participants: missing"),
        ("study: x\nscenarios: [tenancy]\nparticipants: 0\n", "participants"),
        ("study: x\nscenarios: [tenancy]\nparticipants: 2\ncolour: red\n", "colour: unknown"),
        ("study: x\nscenarios: [no-such]\nparticipants: 2\n", "no-such"),
        ("study: x\nscenarios: [tenancy]\nparticipants: 2\nseat: judge\n", "no such seat"),
        ("study: [\n", "cannot read"),
    ],
)
def test_a_bad_study_file_is_one_line_and_exit_2(tmp_path: Path, body: str, said: str) -> None:
    path = _study(tmp_path, body)
    done = subprocess.run(
        [sys.executable, "-m", "disputelab", "--store", str(tmp_path / "runs"), "host",
         str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_run_options_on_the_command_line_are_refused_with_a_study(tmp_path: Path) -> None:
    path = _study(tmp_path, PILOT)
    done = subprocess.run(
        [sys.executable, "-m", "disputelab", "--store", str(tmp_path / "runs"), "host",
         str(path), "--mediator", "none", "--seat", "parties:tenant"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "--seat, --mediator: a study file sets these" in done.stderr


def test_a_scenario_file_is_not_taken_for_a_study(tmp_path: Path) -> None:
    assert is_study_file(str(_study(tmp_path, PILOT)))
    other = tmp_path / "scenario.yaml"
    other.write_text("id: x\ntitle: y\n", encoding="utf-8")
    assert not is_study_file(str(other)) and not is_study_file("tenancy")
    with pytest.raises(StudyError, match="a study is a mapping"):
        read_study(_study(tmp_path, "- a list\n"))
