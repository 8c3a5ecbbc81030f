"""`disputelab view`'s index filters the runs and compares the ticked ones: `/compare`
is the leaderboard `compare` makes of them, and a query it cannot answer is a 400 page
with one line saying why."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import escape
from pathlib import Path

import pytest

from disputelab import api
from disputelab.report.serve import ReportServer
from tests.report.pages import fetch, serving, three_runs


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[str, str, str]]:
    root = tmp_path_factory.mktemp("view-compare")
    return root, three_runs(root)


@pytest.fixture(scope="module")
def server(store: tuple[Path, tuple[str, str, str]]) -> Iterator[ReportServer]:
    with serving(store[0]) as srv:
        yield srv


def _rows(page: str) -> list[list[str]]:
    """The cells of every table row of the page, as text."""
    return [
        [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S)
    ]


def test_the_index_has_filter_controls_and_a_checkbox_per_run(
    server: ReportServer, store: tuple[Path, tuple[str, str, str]]
) -> None:
    status, _, page = fetch(server, "/")
    assert status == 200
    for control in ("filter-text", "filter-kind", "filter-status", "compare-by", "compare-ticked"):
        assert f'id="{control}"' in page
    for run_id in store[1]:
        row = re.search(rf'<tr data-run="{run_id}"[^>]*>(.*?)</tr>', page, re.S)
        assert row is not None and 'type="checkbox" class="tick"' in row.group(1)
    kinds = re.search(r'<select id="filter-kind">(.*?)</select>', page, re.S)
    assert kinds is not None and re.findall(r"<option[^>]*>(.*?)</option>", kinds.group(1)) == [
        "any",
        "experiment",
        "run",
    ]
    assert re.search(r"<option selected>run</option>", page)  # ticked runs compare as runs


def test_compare_of_two_runs_shows_the_leaderboard_that_compare_makes(
    server: ReportServer, store: tuple[Path, tuple[str, str, str]]
) -> None:
    root, (short, long, _) = store
    status, headers, page = fetch(server, f"/compare?run={short}&run={long}&by=run")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    board = api.compare([short, long], by="run", store=root)
    assert f"Leaderboard: {board.metric} by run" in page
    ranked = [r[:2] for r in _rows(page) if r[:1] in (["1"], ["2"])]
    assert ranked == [["1", board.ranking[0]], ["2", board.ranking[1]]]
    for run_id in (short, long):
        assert f'href="/run/{run_id}"' in page  # each compared run links its report


def test_the_metric_asked_for_is_ranked_on_and_kept_when_switching_arms(
    server: ReportServer, store: tuple[Path, tuple[str, str, str]]
) -> None:
    _, (short, long, _) = store
    status, _, page = fetch(server, f"/compare?run={short}&run={long}&by=run&metric=party_turns")
    assert status == 200
    assert "Leaderboard: socrates-oracle.party_turns by run" in page
    switch = f"/compare?run={short}&amp;run={long}&amp;by=mediator&amp;metric=party_turns"
    assert f'href="{switch}"' in page


def test_one_run_compares_by_mediator_its_mediated_and_unmediated_episodes(
    server: ReportServer,
) -> None:
    status, _, page = fetch(server, "/compare?run=plain&by=mediator")
    assert status == 200
    assert sorted(r[1] for r in _rows(page) if r[:1] in (["1"], ["2"])) == ["none", "rule"]


def test_the_comparison_is_kept_while_its_runs_are_unchanged(
    server: ReportServer, store: tuple[Path, tuple[str, str, str]]
) -> None:
    _, (short, long, _) = store
    path = f"/compare?run={long}&run={short}&by=run"
    assert fetch(server, path)[2] == fetch(server, path)[2]


BAD = [
    ("run=no-such-run&run={short}&by=run", "no run 'no-such-run'"),
    ("run={short}&by=run", "by run: give two or more runs, not 1"),
    ("run={short}&run={short}&by=run", "by run: give two or more runs, not 1"),
    ("run={short}&run={long}&by=seed", "by: unknown 'seed'; use model, mediator, run"),
    ("", "give the runs to compare: /compare?run=A&run=B"),
    ("by=run", "give the runs to compare"),
    ("run={short}&run={long}&by=run&metric=nonsense", "no metric 'nonsense' in these runs"),
    ("run={short}&run={long}&by=model", "by model: these runs have 1 model (rule)"),
    ("run={short}&colour=red", "unknown parameter 'colour'; use run, by and metric"),
    ("run={short}&run={long}&by=run&by=model", "give by once, not 2 times"),
    ("run", "the query cannot be read"),
]


@pytest.mark.parametrize(("query", "message"), BAD)
def test_a_query_that_cannot_be_answered_is_a_400_page_saying_why(
    server: ReportServer, store: tuple[Path, tuple[str, str, str]], query: str, message: str
) -> None:
    short, long, _ = store[1]
    status, _, page = fetch(server, "/compare?" + query.format(short=short, long=long))
    assert status == 400
    assert escape(message) in page and "Traceback" not in page
    assert len(re.findall(r"<p>", page)) == 2  # the message, and the way back to the runs


def test_compare_keeps_the_servers_refusals(
    server: ReportServer, store: tuple[Path, tuple[str, str, str]]
) -> None:
    short, long, _ = store[1]
    path = f"/compare?run={short}&run={long}&by=run"
    assert fetch(server, path, method="POST")[0] == 405
    assert fetch(server, path, host="attacker.example")[0] == 421
    assert fetch(server, "/compare/../run/" + short)[0] == 404  # no path beyond /compare
