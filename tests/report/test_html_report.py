"""The HTML report as a file: self-contained, escaped, built from the same tables as the
markdown report, and carrying each protocol's own episode view. (What it does in a
browser is tested in test_html_browser.py.)"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType

import pytest

from disputelab.protocols.view import Chart, EpisodeView, default_view
from disputelab.report.blocks import markdown_blocks
from disputelab.report.html import run_html, script_json
from disputelab.report.html_data import Interner
from disputelab.store.sqlite import Store
from tests.report.pages import (
    PAYLOADS,
    cli,
    embedded,
    episodes,
    motivated_run,
    payload_scenario,
    small_experiment,
)


class _Elements(HTMLParser):
    """Every start tag with its attributes, and the text of each script element."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((self._in_script, ""))

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None


def _elements(html: str) -> _Elements:
    parser = _Elements()
    parser.feed(html)
    return parser


@pytest.fixture(scope="module")
def experiment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, str]]:
    store = small_experiment(tmp_path_factory.mktemp("experiment"))
    yield store, "small"
    store.close()


def test_the_page_requests_nothing_from_anywhere(experiment: tuple[Store, str]) -> None:
    html = run_html(*experiment)
    tags = _elements(html).tags
    urls = [
        v or "" for _, attrs in tags for k, v in attrs.items() if k in ("src", "href", "action")
    ]
    assert urls, "expected the figures' data URIs and in-page links"
    assert all(u.startswith(("data:", "#")) for u in urls), [u[:40] for u in urls]
    assert not [t for t, a in tags if t in ("link", "script", "iframe") and a.get("src")]
    assert [a.get("rel") for t, a in tags if t == "link"] == ["icon"]  # data:, not fetched
    policy = next(
        a["content"] or "" for t, a in tags if a.get("http-equiv") == "Content-Security-Policy"
    )
    assert policy.startswith("default-src 'none'")


def test_the_experiment_tables_are_the_markdown_reports_with_their_intervals(
    experiment: tuple[Store, str],
) -> None:
    store, run_id = experiment
    markdown = cli(store.root, "report", run_id)
    html = run_html(store, run_id)
    # The same cell text, e.g. "74.9 ± 0.7††", "98.2 ± n/a (1 cluster)" (too few scenarios
    # for an interval) or "100.0 ± n/a (2 clusters) (2ᵃ undef.)", stands in both.
    cells = re.findall(r"\| ([0-9.]+ ± (?:[0-9.]+|n/a)[†‡]*(?: \([^|]*\))?⚑?) (?=\|)", markdown)
    assert cells
    for cell in cells:
        assert f"<td>{cell}</td>" in html


def test_the_experiment_plots_are_inline_svg_images(experiment: tuple[Store, str]) -> None:
    html = run_html(*experiment)
    sources = re.findall(r'<img src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert len(sources) == 3  # trajectories, gain shift, axis gain
    svg = base64.b64decode(sources[0]).decode("utf-8")
    assert svg.lstrip().startswith("<?xml") and "party turn" in svg


def test_episodes_are_embedded_in_blocks_with_their_strings_written_once(
    experiment: tuple[Store, str],
) -> None:
    store, run_id = experiment
    html = run_html(store, run_id)
    meta = embedded(html, "report-meta")
    eps = episodes(html)
    assert [e["id"] for e in eps] == store.episode_ids(run_id)
    assert len(eps) == meta["count"] == 28 and meta["chunk"] < 28
    strings = meta["strings"]
    assert len(strings) == len(set(strings))
    first = eps[0]
    said = [strings[i] for i in first["text"]]
    assert said == [t.text for t in store.load_episode(first["id"]).episode.turns]


def test_every_scenario_and_transcript_string_is_escaped(tmp_path: Path) -> None:
    path = payload_scenario(tmp_path / "payload.yaml")
    assert "ok" in cli(tmp_path, "scenarios", "validate", str(path))
    cli(tmp_path, "run", str(path), "--mediator", "rule", "--budget", "12")
    store = Store(tmp_path)
    html = run_html(store, store.resolve_run("last"))
    page = _elements(html)
    # No element came from the payloads: the only script elements are the JSON blocks
    # and the page's own script, and no element carries an event handler.
    kinds = [a.get("type") for a, _ in page.scripts]
    assert kinds.count(None) == 1 and set(kinds) == {None, "application/json"}
    assert not [a for _, a in page.tags if any(k.startswith("on") for k in a)]
    assert not [t for t, _ in page.tags if t == "img"]  # a single run has no figures
    # The payloads are there as text: escaped in markup, JSON-escaped in the data.
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    data = embedded(html, "report-meta")
    names = [name for sc in data["scenarios"] for _, name in sc["parties"]]
    assert any(PAYLOADS[0] in n for n in names)
    assert any(PAYLOADS[2] in s for s in data["strings"])


def test_json_for_a_script_element_cannot_close_it() -> None:
    tricky = {"x": "</script><script>alert(1)</script><!-- & -->"}
    text = str(script_json(tricky))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == tricky


def test_markdown_tables_are_read_back_as_headings_tables_and_notes() -> None:
    blocks = markdown_blocks(
        "# Experiment `x`\n\n| a | b |\n|---|---|\n| 1.0 ± 0.2† | `c` |\n\n"
        "Cells: **mean** ± _half-width_.\n> Incomplete.\n| z |\n|---|\n"
    )
    assert [b.kind for b in blocks] == ["heading", "table", "para", "note", "table"]
    assert blocks[0].spans == [("", "Experiment "), ("code", "x")]
    assert blocks[1].header == [[("", "a")], [("", "b")]]
    assert blocks[1].rows == [[[("", "1.0 ± 0.2†")], [("code", "c")]]]
    assert ("strong", "mean") in blocks[2].spans and ("em", "half-width") in blocks[2].spans
    assert blocks[4].header == [[("", "z")]] and blocks[4].rows == []


def test_an_interner_gives_each_distinct_value_one_index() -> None:
    names: Interner[str] = Interner()
    assert [names("a"), names("b"), names("a")] == [0, 1, 0]
    assert names.items == ["a", "b"]


def test_motivated_turns_carry_every_partys_candidate_thoughts(tmp_path: Path) -> None:
    run_id = motivated_run(tmp_path)
    store = Store(tmp_path)
    html = run_html(store, run_id)
    strings = embedded(html, "report-meta")["strings"]
    ep = episodes(html)[0]
    # turn index, who, text, note: the roundtable's view adds the round's candidate
    # thoughts of both parties, one of them voiced, and how the floor was taken.
    first = [t for t in ep["thoughts"] if t[0] == 0]
    assert {strings[t[1]] for t in first} == {"tenant", "landlord"}
    assert any(strings[t[3]].endswith("voiced") for t in first)
    assert any(strings[n[1]] == "floor" for n in ep["notes"])


def test_a_protocol_contributes_its_own_view_through_the_registry(
    toy: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def hands_view(self: object, episode: object) -> EpisodeView:
        base = default_view(episode)  # type: ignore[arg-type]
        hands = [(1.0, 0.0), (2.0, 2.0)]
        return EpisodeView(
            base.turns, (("chair", "counted hands"),), (Chart("Hands up", "hands", {"up": hands}),)
        )

    monkeypatch.setattr(toy.ShowOfHands, "episode_view", hands_view)
    cli(tmp_path, "run", "tenancy", "--protocol", "show-of-hands", "--param", "rounds=2")
    store = Store(tmp_path)
    html = run_html(store, store.resolve_run("last"))
    strings = embedded(html, "report-meta")["strings"]
    (ep,) = episodes(html)
    assert ep["charts"] == [
        {"title": "Hands up", "y": "hands", "lines": [["up", [1.0, 0.0, 2.0, 2.0]]]}
    ]
    assert [[strings[h], strings[t]] for h, t in ep["panels"]] == [["chair", "counted hands"]]
    # What the chair heard differs from what was said (upper case): the default view
    # shows it under the turn, as a bilateral protocol's delivered words would be.
    heard = [strings[t] for _, label, t in ep["notes"] if strings[label] == "heard by chair"]
    assert heard and all(h == h.upper() for h in heard)


def test_an_unfinished_episode_is_listed_with_its_error_and_no_metrics(tmp_path: Path) -> None:
    run_id = motivated_run(tmp_path, budget=8)
    store = Store(tmp_path)
    failed = store.episode_ids(run_id)[1]
    store.fail_episode(failed, "the model timed out")
    html = run_html(store, run_id)
    table = embedded(html, "episode-rows")
    columns = table["columns"]
    row = next(r for r in table["rows"] if r[0] == failed)
    assert row[columns.index("status")] == "failed"
    assert row[columns.index("stop_reason")] == "the model timed out"
    assert row[columns.index("final_consensus")] is None
    ep = next(e for e in episodes(html) if e["id"] == failed)
    assert ep["status"] == "failed" and ep["scores"] == [] and ep["stop"] == "the model timed out"
    assert "failed 1" in html  # the summary counts episodes by status
