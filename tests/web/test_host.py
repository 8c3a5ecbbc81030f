"""The hosted table over HTTP (Starlette's TestClient): tokens, expiry, a forged token,
a second browser, a refused move, escaped markup, and an episode played to its end with
the questionnaire stored."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the host extra is not installed")
from starlette.testclient import TestClient

from disputelab.api.host import new_table, table_app
from disputelab.web.people import stored_answers

SEATS = ["parties:tenant", "parties:landlord"]


@pytest.fixture
def hosted(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str], Path, object]]:
    table, tokens = new_table(
        "tenancy", seats=SEATS, store=tmp_path / "runs", mediator="rule", model="rule"
    )
    with TestClient(table_app(table)) as client:
        yield client, tokens, tmp_path / "runs", table


class Browser:
    """One browser's cookies over the table's one client (whose loop runs the episode)."""

    def __init__(self, client: TestClient) -> None:
        self.client, self.cookies = client, dict[str, str]()

    def _go(self, method: str, url: str, **kw: object) -> Any:
        self.client.cookies.clear()
        for k, v in self.cookies.items():
            self.client.cookies.set(k, v)
        response = self.client.request(method, url, **kw)  # type: ignore[arg-type]
        self.cookies.update(dict(self.client.cookies))
        return response

    def get(self, url: str) -> Any:
        return self._go("GET", url)

    def post(self, url: str, data: dict[str, str] | dict[str, str | list[str]]) -> Any:
        return self._go("POST", url, data=data)


def test_a_forged_token_is_refused(hosted: tuple[TestClient, dict[str, str], Path, object]) -> None:
    client, _, _, _ = hosted
    page = client.get("/s/not-a-token")
    assert page.status_code == 403 and "not a seat" in page.text


def test_an_expired_link_is_gone(hosted: tuple[TestClient, dict[str, str], Path, object]) -> None:
    client, tokens, _, table = hosted
    table.invites["parties:tenant"].expires_at = 0.0  # type: ignore[attr-defined]
    page = client.get(f"/s/{tokens['parties:tenant']}")
    assert page.status_code == 410 and "expired" in page.text


def test_a_second_browser_on_one_seat_is_refused(
    hosted: tuple[TestClient, dict[str, str], Path, object],
) -> None:
    client, tokens, _, _ = hosted
    link = f"/s/{tokens['parties:tenant']}"
    first = Browser(client)
    other = Browser(client)  # no cookie: another browser
    assert first.get(link).status_code == 200  # type: ignore[attr-defined]
    page = other.get(link)
    assert page.status_code == 409 and "another browser" in page.text
    assert first.get(link).status_code == 200  # type: ignore[attr-defined]


def _wait_for_form(client: TestClient, link: str) -> str:
    for _ in range(2000):  # polled, never timed
        page = client.get(link).text
        if 'id="move"' in page or 'id="ended"' in page:
            return page
    raise AssertionError("no form came")


def test_the_episode_plays_to_its_end_with_refusals_and_escaping(
    hosted: tuple[TestClient, dict[str, str], Path, object],
) -> None:
    client, tokens, store, _ = hosted
    browsers = {s: Browser(client) for s in SEATS}
    for seat, b in browsers.items():
        link = f"/s/{tokens[seat]}"
        assert "Before you take your seat" in b.get(link).text
        b.post(f"{link}/consent", data={})
    first = True
    ended = {s: False for s in SEATS}
    for _ in range(200):
        for seat, b in browsers.items():
            link = f"/s/{tokens[seat]}"
            page = b.get(link).text
            if 'id="ended"' in page:
                ended[seat] = True
                continue
            if 'id="move"' not in page:
                continue
            if first:
                keys = re.findall(r'name="([a-z_:]+)" value=', page)
                bad = b.post(f"{link}/move", data={keys[0]: "no-such-option"}).text
                assert "is not an option" in bad
                text_keys = re.findall(r'<textarea name="([a-z_]+)"', page)
                if text_keys:
                    b.post(f"{link}/move", data={text_keys[0]: "<script>alert(1)</script>"})
                    first = False
                    continue
            b.post(f"{link}/move", data={})
        if all(ended.values()):
            break
    assert all(ended.values())
    page = browsers["parties:tenant"].get(f"/s/{tokens['parties:tenant']}").text
    assert not first  # a words field was asked and took the markup
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    for seat, b in browsers.items():
        answers = {"satisfaction": "4", "fairness": "3", "trust_mediator": "5"}
        b.post(f"/s/{tokens[seat]}/questions", data=answers)
    rows = [r for r in stored_answers(store, _run(store))]
    assert len(rows) == 6


def _run(store: Path) -> str:
    import sqlite3

    db = sqlite3.connect(store / "people.sqlite")
    (run,) = db.execute("SELECT DISTINCT run FROM answers").fetchone()
    db.close()
    return str(run)


def test_the_run_options_reach_the_hosted_episode(tmp_path: Path) -> None:
    table, tokens = new_table(
        "tenancy",
        seats=["parties:tenant"],
        store=tmp_path,
        mediator="rule",
        model="rule",
        condition="posture:competing",
        budget=4,
        seed=7,
    )
    with TestClient(table_app(table)) as client:
        person = Browser(client)
        link = f"/s/{tokens['parties:tenant']}"
        person.get(link)
        person.post(f"{link}/consent", data={})
        for _ in range(50):
            if 'id="ended"' in _wait_for_form(client, link):
                break
            person.post(f"{link}/move", data={})
    ended = table.ended
    assert ended is not None
    from disputelab.api import open_store

    ep = open_store(tmp_path).load_episode(ended.episode_id).episode
    assert (ep.condition, ep.seed) == ("posture:competing", 7)
    assert max(t.party_turn for t in ep.turns) <= 4


def test_a_bad_run_option_is_one_line_before_anything_is_served(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "disputelab", "--store", str(tmp_path), "host", "tenancy",
         "--seat", "parties:tenant", "--param", "nosuch=1"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    # Worded as `play` and `run` word it: the option, not the spec field it fills.
    assert done.returncode == 2 and "--param nosuch: not a parameter" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_waiting_seat_sees_its_own_brief_and_the_dialogue_live(
    hosted: tuple[TestClient, dict[str, str], Path, object],
) -> None:
    """Before its first move, and while the other seat is asked, a seat's page shows its
    own brief and the turns spoken so far, never the other party's brief."""
    client, tokens, _, table = hosted
    sources = table.sources  # type: ignore[attr-defined]
    for _ in range(2000):  # polled, never timed: one seat is asked, the other waits
        if any(s.prompt is not None for s in sources.values()):
            break
        client.get(f"/s/{tokens[SEATS[0]]}")
    asked = next(k for k, s in sources.items() if s.prompt is not None)
    waiting = next(k for k in SEATS if k != asked)
    assert sources[waiting].prompt is None
    assert sources[waiting].brief and sources[waiting].brief != sources[asked].brief
    assert "Only you can read what follows" in sources[waiting].brief
    # No rewrites at this table: both seats have heard the same turns, up to the turn asked.
    heard = [(line.index, line.text) for line in sources[waiting].heard]
    assert heard == [(line.index, line.text) for line in sources[asked].prompt.transcript]


def test_a_party_backs_any_option_and_the_ended_page_streams_nothing(tmp_path: Path) -> None:
    """A stance's form backs one option (a radio) and accepts others (checkboxes), in
    that order whatever their order in the list; once the episode ends, its event stream
    ends too (a server does not wait on pages left open) and the page opens none."""
    table, tokens = new_table(
        "tenancy", seats=["parties:tenant"], store=tmp_path, mediator="rule", model="rule",
        budget=2,
    )  # fmt: skip
    link = f"/s/{tokens['parties:tenant']}"
    with TestClient(table_app(table)) as client:
        person = Browser(client)
        person.get(link)
        person.post(f"{link}/consent", data={})
        page = _wait_for_form(client, link)
        assert 'type="radio" class="backed" name="stance:repairs" value="C"' in page
        assert 'type="checkbox" class="also" name="stance:repairs" value="B"' in page
        person.post(f"{link}/move", data={"stance:repairs": ["C", "B"]})
        while 'id="ended"' not in _wait_for_form(client, link):
            person.post(f"{link}/move", data={})
        assert "EventSource" not in person.get(link).text
        assert person.get(f"{link}/events").text.startswith("data: ")  # and it returned
    assert table.ended is not None
    from disputelab.api import open_store

    ep = open_store(tmp_path).load_episode(table.ended.episode_id).episode
    first = next(t for t in ep.turns if t.speaker == "tenant")
    assert first.action is not None
    assert first.action.stances["repairs"] == ("C", ("C", "B"))
