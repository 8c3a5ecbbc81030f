"""Two people negotiate `tenancy` with the rule mediator in two windows of a real
headless Chromium, through the invite links `disputelab host` prints: each agrees to
the consent, reads their brief, and makes their moves through the page's own radios,
checkboxes and text box as their page asks, until the episode stops; then both answer
the questionnaire. The stored episode, its turns, the answers and the report show what
they did. At one turn both pages are photographed, and each shows its own party's
private brief and nothing of the other's. A person may also leave through their page,
which stops the table for both."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("selenium", reason="selenium is not installed (pip install '.[browser]')")
pytest.importorskip("uvicorn", reason="the host extra is not installed")
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.report.tidy import seat_of
from disputelab.scenario import builtin_scenarios
from disputelab.store.sqlite import Store
from tests.live_browser import PAGE_WAIT_S, click_and_wait, close_extra_windows
from tests.web.host_pages import (
    ANSWERS,
    MOVES,
    SEATS,
    SHOT_AT,
    answer_questions,
    hosted,
    make,
    negotiate,
    photograph,
    shown,
    take_seats,
)

runner = CliRunner()


def _private(party: Any) -> tuple[str, str]:
    """Lines of a party's brief that only that party is shown."""
    return f"Your objective: {party.objective}", f"Notes: {party.private_notes}"


def _photograph(driver: Any, windows: dict[str, str], asked: str, folder: Path) -> None:
    """Both pages at the same turn, saved as PNGs, each showing its own private brief
    and nothing of the other's."""
    photograph(driver, windows, asked, {s: folder / f"{s.split(':')[1]}.png" for s in SEATS})
    parties = {p.id: p for p in builtin_scenarios()["tenancy"].parties}
    for seat, handle in windows.items():
        driver.switch_to.window(handle)
        brief = driver.find_element(By.ID, "brief").text
        me = seat.split(":")[1]
        own, (other,) = parties[me], [p for p in parties.values() if p.id != me]
        assert all(line in brief for line in _private(own)), brief
        assert not any(line in brief for line in _private(other)), brief
        assert other.objective not in driver.find_element(By.TAG_NAME, "body").text
        assert driver.find_elements(By.ID, "move" if seat == asked else "waiting")


def test_two_people_negotiate_through_their_links(browser: Any, tmp_path: Path) -> None:
    store = tmp_path / "runs"

    def before(n: int, seat: str) -> None:
        if n == SHOT_AT:
            _photograph(browser, windows, seat, tmp_path)

    with hosted(store) as (server, links):
        try:
            windows = take_seats(browser, links)
            made = negotiate(browser, windows, before)
            answer_questions(browser, windows)
            rest = server.communicate(timeout=300)[0]  # it stops once both have answered
        finally:
            close_extra_windows(browser)
    assert server.returncode == 0, rest
    assert [s for s, _ in made] == [SEATS[0], SEATS[1], SEATS[0], SEATS[1]]
    assert all((tmp_path / f"{s.split(':')[1]}.png").stat().st_size > 10_000 for s in SEATS)
    run_id = _check_stored(store, made)
    assert f"stored as run {run_id}: all 2 parties signalled consensus" in rest
    report = runner.invoke(app, ["--store", str(store), "report", run_id])
    assert report.exit_code == 0, report.output
    assert _episode_id(store, run_id) in report.output


def _episode_id(store: Path, run_id: str) -> str:
    db = Store(store, writable=False)
    (episode_id,) = db.episode_ids(run_id)
    db.close()
    return episode_id


def _check_stored(store: Path, made: list[tuple[str, Any]]) -> str:
    """The stored episode holds every move as made, its stop reason, and each person's
    answers; the run id."""
    db = Store(store, writable=False)
    run_id = db.resolve_run("last")
    (episode_id,) = db.episode_ids(run_id)
    episode = db.load_episode(episode_id).episode
    db.close()
    assert episode.outcome is not None
    assert episode.outcome.stop_reason == "all 2 parties signalled consensus at party turn 4"
    party_turns = [t for t in episode.turns if t.role == "party"]
    assert [(t.speaker, t.text) for t in party_turns] == [
        (seat.split(":")[1], move.words) for seat, move in made
    ]
    for turn, (_, move) in zip(party_turns, made, strict=True):
        assert turn.action is not None and turn.action.signal.value == move.signal
        stated = {k: (s.option, *s.acceptable[1:]) for k, s in turn.action.stances.items()}
        assert stated == move.stances
    assert episode.agents["mediator"] == "rule"
    with sqlite3.connect(store / "people.sqlite") as people:
        rows = people.execute(
            "SELECT participant, item, value FROM answers WHERE run = ? AND episode = ?",
            (run_id, episode_id),
        ).fetchall()
    people.close()
    assert sorted((item, value) for _, item, value in rows) == sorted(
        (k, int(v)) for k, v in ANSWERS.items() for _ in SEATS
    )
    seated = {seat_of(episode.agents, t) for t in party_turns}
    assert {p for p, _, _ in rows} == {who for _, who in seated} and len(seated) == 2
    assert {kind for kind, _ in seated} == {"human"}
    return run_id


def test_a_person_who_leaves_stops_the_table_for_both(browser: Any, tmp_path: Path) -> None:
    """The tenant moves once, then leaves through the page's link and its confirmation:
    both pages show the end, the landlord answers the questions, the server stops."""
    store = tmp_path / "runs"
    with hosted(store) as (server, links):
        try:
            windows = take_seats(browser, links)
            _leave_after_one_move(browser, windows)
            answer_questions(browser, {SEATS[1]: windows[SEATS[1]]})
            rest = server.communicate(timeout=300)[0]
        finally:
            close_extra_windows(browser)
    assert server.returncode == 0 and "withdrawn: participant p-" in rest, rest
    db = Store(store, writable=False)
    (episode_id,) = db.episode_ids(db.resolve_run("last"))
    episode = db.load_episode(episode_id).episode
    db.close()
    assert episode.outcome is not None and episode.outcome.status.value == "withdrawn"
    assert [t.text for t in episode.turns if t.role == "party"] == [MOVES[SEATS[0]][0].words]


def _leave_after_one_move(driver: Any, windows: dict[str, str]) -> None:
    tenant, landlord = (windows[s] for s in SEATS)
    _wait_for(driver, tenant, lambda: shown(driver)[0] == "move")
    make(driver, MOVES[SEATS[0]][0])
    _wait_for(driver, landlord, lambda: shown(driver)[0] == "move")
    driver.switch_to.window(tenant)  # the landlord is asked: the tenant leaves instead
    click_and_wait(driver, "leave")
    assert "Leave the study?" in driver.title
    click_and_wait(driver, "confirm-leave")
    assert driver.find_elements(By.ID, "left")
    _wait_for(driver, landlord, lambda: shown(driver)[0] == "ended")
    assert "withdrawn: participant" in driver.find_element(By.ID, "ended").text


def _wait_for(driver: Any, window: str, ready: Callable[[], bool]) -> None:
    driver.switch_to.window(window)
    WebDriverWait(driver, PAGE_WAIT_S, ignored_exceptions=(WebDriverException,)).until(
        lambda _: ready()
    )
