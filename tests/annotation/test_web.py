"""The annotation app over HTTP (Starlette's TestClient): a forged, an expired and a
second browser's link refused, consent first, labels saved as each turn is sent, a bad
post refused without saving, markup in a transcript escaped, and a finished annotator."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the host extra is not installed")
from starlette.testclient import TestClient

from disputelab.api import run
from disputelab.api.annotate import Annotation, annotation_app, new_annotation, read_labels


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    run("tenancy", model="rule", mediator="rule", budget=8, store=root)  # the mediator speaks once
    return root


@pytest.fixture
def session(stored: Path, tmp_path: Path) -> tuple[Annotation, dict[str, str]]:
    annotation, tokens = new_annotation("last", annotators=2, store=stored)
    return replace(annotation, store=tmp_path), tokens  # labels of this test only


@pytest.fixture
def client(session: tuple[Annotation, dict[str, str]]) -> Iterator[TestClient]:
    with TestClient(annotation_app(session[0])) as c:
        yield c


class Browser:
    """One browser's cookies over the app's one client."""

    def __init__(self, client: TestClient) -> None:
        self.client, self.cookies = client, dict[str, str]()

    def go(self, method: str, url: str, **kw: Any) -> Any:
        self.client.cookies.clear()
        for k, v in self.cookies.items():
            self.client.cookies.set(k, v)
        response = self.client.request(method, url, follow_redirects=True, **kw)
        self.cookies.update(dict(self.client.cookies))
        return response


def turn_form(annotation: Annotation, episode: int, turn: int, close: str = "2") -> dict[str, str]:
    """A full form for one turn: every party backs its stated option, `close` on every
    topic, no norm broken."""
    t = annotation.transcripts[episode]
    here = t.turns[turn]
    form: dict[str, str] = {}
    if here.role != "party":
        return form
    for topic in t.scenario.topics:
        for party in t.scenario.parties:
            form[f"stance:{party.id}:{topic.id}"] = "none"
        form[f"consensus:{topic.id}"] = close
    return form


def test_a_forged_token_is_refused(client: TestClient) -> None:
    page = client.get("/a/not-a-token")
    assert page.status_code == 403 and "not a labelling link" in page.text
    assert client.get("/a/not-a-token/e/0/t/0").status_code == 403


def test_an_expired_link_is_gone(
    client: TestClient, session: tuple[Annotation, dict[str, str]]
) -> None:
    annotation, tokens = session
    annotation.invites["annotator-1"].expires_at = 0.0
    page = client.get(f"/a/{tokens['annotator-1']}")
    assert page.status_code == 410 and "expired" in page.text
    assert client.get(f"/a/{tokens['annotator-2']}").status_code == 200


def test_a_second_browser_is_refused(
    client: TestClient, session: tuple[Annotation, dict[str, str]]
) -> None:
    link = f"/a/{session[1]['annotator-1']}"
    first, other = Browser(client), Browser(client)
    assert first.go("GET", link).status_code == 200
    refused = other.go("GET", link)
    assert refused.status_code == 409 and "open in another browser" in refused.text
    assert other.go("POST", f"{link}/e/0/t/0", data={"norm": "1"}).status_code == 409
    assert first.go("GET", link).status_code == 200


def test_labels_are_saved_as_each_turn_is_sent(
    client: TestClient, session: tuple[Annotation, dict[str, str]]
) -> None:
    annotation, tokens = session
    who = annotation.invites["annotator-1"].participant
    link = f"/a/{tokens['annotator-1']}"
    browser = Browser(client)
    assert "I agree" in browser.go("GET", link).text
    # No labelling before consent: the turn page sends the annotator back to it.
    assert "I agree" in browser.go("GET", f"{link}/e/0/t/0").text
    browser.go("POST", f"{link}/consent")
    form = turn_form(annotation, 0, 0, close="4") | {"norm": "1"}
    form["stance:tenant:rent"] = "A"
    page = browser.go("POST", f"{link}/e/0/t/0", data=form)
    assert page.status_code == 200 and "turn 2 of" in page.text
    saved = read_labels(annotation.store, annotation.run_id)
    assert {x.annotator for x in saved} == {who}
    assert {(x.kind, x.value) for x in saved if x.topic == "rent"} >= {("consensus", "4")}
    assert [x.value for x in saved if x.party == "tenant" and x.topic == "rent"] == ["A"]
    assert [x.value for x in saved if x.kind == "norm"] == ["1"]
    # The next turn's form starts from the stances just given; the flag starts clear.
    assert re.search(r'<option value="A" selected>A:', page.text)
    assert 'name="norm" value="1" checked' not in page.text


def test_a_post_missing_a_label_is_refused_and_nothing_saved(
    client: TestClient, session: tuple[Annotation, dict[str, str]]
) -> None:
    annotation, tokens = session
    link = f"/a/{tokens['annotator-2']}"
    browser = Browser(client)
    browser.go("GET", link)
    browser.go("POST", f"{link}/consent")
    form = turn_form(annotation, 0, 0)
    del form["consensus:rent"]
    page = browser.go("POST", f"{link}/e/0/t/0", data=form)
    assert page.status_code == 400 and "how close the parties are on" in page.text
    assert read_labels(annotation.store) == []
    assert browser.go("GET", f"{link}/e/0/t/99").status_code == 404
    assert browser.go("GET", f"{link}/e/7/t/0").status_code == 404


def test_markup_in_a_transcript_is_escaped(
    stored: Path, tmp_path: Path, session: tuple[Annotation, dict[str, str]]
) -> None:
    annotation, tokens = session
    first = annotation.transcripts[0]
    evil = replace(first.turns[0], text="<script>alert('x')</script><b>bold</b>")
    parties = [p.model_copy(update={"name": "<i>Tenant</i>"}) for p in first.scenario.parties]
    scenario = first.scenario.model_copy(update={"parties": parties})
    crafted = replace(first, turns=(evil, *first.turns[1:]), scenario=scenario)
    annotation = replace(annotation, transcripts=(crafted,))
    with TestClient(annotation_app(annotation)) as client:
        link = f"/a/{tokens['annotator-1']}"
        browser = Browser(client)
        browser.go("GET", link)
        browser.go("POST", f"{link}/consent")
        page = browser.go("GET", f"{link}/e/0/t/0").text
    assert "<script>alert" not in page and "&lt;script&gt;alert(" in page
    assert "<b>bold</b>" not in page and "<i>Tenant</i>" not in page
    assert "&lt;i&gt;Tenant&lt;/i&gt;" in page


def label_everything(browser: Browser, annotation: Annotation, link: str, close: str) -> Any:
    """Label every turn of every episode and rate every mediator; the last page."""
    browser.go("GET", link)
    browser.go("POST", f"{link}/consent")
    page = None
    for n, t in enumerate(annotation.transcripts):
        for i in range(len(t.turns)):
            form = turn_form(annotation, n, i, close)
            page = browser.go("POST", f"{link}/e/{n}/t/{i}", data=form)
            assert page.status_code == 200, page.text
        if t.mediated:
            assert "How did the mediator do?" in page.text
            rating = {item.key: "4" for item in annotation.items}
            page = browser.go("POST", f"{link}/e/{n}/rubric", data=rating)
    return page


def test_an_annotator_who_labels_everything_is_done(
    client: TestClient, session: tuple[Annotation, dict[str, str]]
) -> None:
    annotation, tokens = session
    first = annotation.invites["annotator-1"]
    assert not annotation.done(first)
    page = label_everything(Browser(client), annotation, f"/a/{tokens['annotator-1']}", "3")
    assert 'id="thanks"' in page.text
    assert annotation.done(first) and not annotation.all_done()
    turns = sum(len(t.turns) for t in annotation.transcripts)
    norms = [x for x in read_labels(annotation.store) if x.kind == "norm"]
    assert len(norms) == turns
    rubric = [x for x in read_labels(annotation.store) if x.kind == "rubric"]
    mediated = [t for t in annotation.transcripts if t.mediated]
    assert mediated and len(rubric) == len(mediated) * len(annotation.items)


def test_the_rubric_asks_every_statement_and_only_of_a_mediator(
    client: TestClient, session: tuple[Annotation, dict[str, str]]
) -> None:
    annotation, tokens = session
    link = f"/a/{tokens['annotator-1']}"
    browser = Browser(client)
    browser.go("GET", link)
    browser.go("POST", f"{link}/consent")
    mediated = [n for n, t in enumerate(annotation.transcripts) if t.mediated]
    plain = [n for n, t in enumerate(annotation.transcripts) if not t.mediated]
    assert mediated and plain
    assert browser.go("GET", f"{link}/e/{plain[0]}/rubric").status_code == 404
    half = {annotation.items[0].key: "5"}
    page = browser.go("POST", f"{link}/e/{mediated[0]}/rubric", data=half)
    assert page.status_code == 400 and "answer every statement" in page.text
    assert read_labels(annotation.store) == []
    full = {item.key: "2" for item in annotation.items}
    page = browser.go("POST", f"{link}/e/{mediated[0]}/rubric", data=full)
    assert "mediator rated" in page.text
    rubric = read_labels(annotation.store, kinds=["rubric"])
    assert sorted(x.item for x in rubric) == sorted(i.key for i in annotation.items)


def test_stances_carry_forward_past_a_mediator_turn(
    client: TestClient, session: tuple[Annotation, dict[str, str]]
) -> None:
    annotation, tokens = session
    n = next(n for n, t in enumerate(annotation.transcripts) if t.mediated)
    turns = annotation.transcripts[n].turns
    m = next(i for i, t in enumerate(turns) if t.role == "mediator")
    assert 0 < m < len(turns) - 1 and turns[m + 1].role == "party"
    link = f"/a/{tokens['annotator-2']}"
    browser = Browser(client)
    browser.go("GET", link)
    browser.go("POST", f"{link}/consent")
    form = turn_form(annotation, n, m - 1) | {"stance:landlord:lease": "B"}
    browser.go("POST", f"{link}/e/{n}/t/{m - 1}", data=form)
    mediator_page = browser.go("GET", f"{link}/e/{n}/t/{m}")
    assert "After this turn" not in mediator_page.text  # a mediator's turn: the flag only
    browser.go("POST", f"{link}/e/{n}/t/{m}", data={"norm": "1"})
    page = browser.go("GET", f"{link}/e/{n}/t/{m + 1}").text
    lease = page[page.index('name="stance:landlord:lease"') :]
    assert re.match(r'[^<]*>(?:(?!</select>).)*<option value="B" selected>', lease, re.S)
    assert 'name="norm" value="1" checked' not in page
