"""From a run to its human validation: `disputelab run` stores a short rule episode pair,
`disputelab annotate` (a real server process) hands two annotators their links, two
scripted browsers label every turn over HTTP, the server stops once both are done, and
`validate-judge --against human:RUN` scores the trackers against them.

The first annotator labels each topic with the oracle's own level; the second with the
oracle's level too, except that it calls every third unit one level closer. So the
oracle agrees perfectly with the first (alpha 1), less with the second, and the two
annotators agree with each other below 1: checks that would fail on any misalignment of
labels and party turns."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the host extra is not installed")
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.evaluation.validation import level_of
from disputelab.store.sqlite import Store
from tests.live_browser import free_port

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]


def _links(server: subprocess.Popen[str], wanted: int) -> dict[str, tuple[str, str]]:
    """Each annotator's id and link as the server prints them, read as they come."""
    links: dict[str, tuple[str, str]] = {}
    assert server.stdout is not None
    for line in server.stdout:
        print(line, end="")  # shown with -s: the real output of the command
        found = re.match(r"(annotator-\d) \((p-[0-9a-f]+)\): (http://\S+)", line)
        if found:
            links[found[1]] = (found[2], found[3])
        if len(links) == wanted:
            return links
    raise AssertionError(f"the server ended before printing its links: {server.wait()}")


def _last_stated(episode: Any, turn: Any, party: str, topic: str) -> str:
    """The option `party` last stated on `topic` up to `turn`, as a careful reader sees."""
    for earlier in reversed(episode.turns[: episode.turns.index(turn) + 1]):
        if earlier.role == "party" and earlier.speaker == party and earlier.action:
            stance = earlier.action.stances.get(topic)
            return (stance.option if stance else None) or "none"
    return "none"


def _form(episode: Any, turn: Any, scenario: dict[str, Any], closer: bool) -> dict[str, str]:
    """An annotator's labels of one turn: the oracle's consensus level (one closer when
    `closer`) and every party's last stated option."""
    form = {"norm": "0"}
    if turn.role != "party":
        return form
    for topic in scenario["topics"]:
        level = level_of(turn.consensus[topic["id"]]) + 1
        form[f"consensus:{topic['id']}"] = str(min(5, level + 1) if closer else level)
        for party in scenario["parties"]:
            said = _last_stated(episode, turn, party["id"], topic["id"])
            form[f"stance:{party['id']}:{topic['id']}"] = said
    return form


class Browser:
    """A browser of its own: its cookie jar, following redirects."""

    def __init__(self) -> None:
        jar = urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        self.opener = urllib.request.build_opener(jar)

    def get(self, url: str) -> str:
        with self.opener.open(url, timeout=120) as page:
            return str(page.read().decode("utf-8"))

    def post(self, url: str, data: dict[str, str] | None = None) -> str:
        body = urllib.parse.urlencode(data or {}).encode("ascii")
        with self.opener.open(url, data=body, timeout=120) as page:  # an error status raises
            return str(page.read().decode("utf-8"))


def _label(link: str, store: Path, run_id: str, skew: bool) -> None:
    """One scripted annotator in its own browser (its own cookies)."""
    browser = Browser()
    assert "I agree" in browser.get(link)
    browser.post(f"{link}/consent")
    db = Store(store, writable=False)
    records = [db.load_episode(e) for e in db.episode_ids(run_id)]
    db.close()
    unit = 0
    for n, record in enumerate(records):
        for i, turn in enumerate(record.episode.turns):
            closer = skew and turn.role == "party" and unit % 3 == 0
            unit += turn.role == "party"
            form = _form(record.episode, turn, record.scenario, closer)
            page = browser.post(f"{link}/e/{n}/t/{i}", data=form)
        if "How did the mediator do?" in page:
            rating = {"even_handed": "4", "understood": "3", "moved_forward": "3", "clear": "4"}
            browser.post(f"{link}/e/{n}/rubric", data=rating)


def rule_run(store: Path) -> str:
    """A short rule run of `tenancy` with the rule mediator (and its twin) in `store`,
    made through the command line; its run id."""
    made = runner.invoke(
        app,
        ["--store", str(store), "run", "tenancy", "--model", "rule", "--mediator", "rule",
         "--budget", "8"],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    db = Store(store, writable=False)
    run_id = db.resolve_run("last")
    db.close()
    return run_id


def test_run_annotate_and_validate_against_people(tmp_path: Path) -> None:
    store = tmp_path / "runs"
    run_id = rule_run(store)
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    command = [sys.executable, "-m", "disputelab", "--store", str(store), "annotate", "last",
               "--annotators", "2", "--port", str(free_port())]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as server:
        try:
            links = _links(server, 2)
            _label(links["annotator-1"][1], store, run_id, skew=False)
            _label(links["annotator-2"][1], store, run_id, skew=True)
            rest = server.communicate(timeout=300)[0]  # it stops once both are done
        finally:
            if server.poll() is None:
                server.kill()
    print(rest)
    assert server.returncode == 0 and "2 of 2 annotators done" in rest

    against = ["--store", str(store), "validate-judge", "--against", f"human:{run_id}"]
    shown = runner.invoke(app, against, env={"COLUMNS": "250"})
    print(shown.output)
    assert shown.exit_code == 0, shown.output
    assert "alpha on stances (nominal)" in shown.output
    result = runner.invoke(app, [*against, "--format", "json"])
    rows = {r["tracker"]: r for r in json.loads(result.output)["rows"]}
    first, second = (f"alpha vs {links[k][0]}" for k in ("annotator-1", "annotator-2"))
    assert float(rows["oracle"][first]) == 1.0
    assert float(rows["oracle"][second]) < 1.0
    between = float(rows["annotators with each other"]["mean alpha vs annotators"])
    assert between < 1.0 and float(rows["oracle"]["mean alpha vs annotators"]) > between
    # The constant baseline gives one level everywhere: no better than chance.
    assert abs(float(rows["baseline: constant"]["mean alpha vs annotators"])) < 0.1
    # Both annotators gave the stated stances: self-report reads exactly those.
    assert rows["self-report"]["stance alpha (mean)"] == "1.000"
    assert rows["oracle"]["stance alpha (mean)"] == "-"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["validate-judge", "--against", "people:last"], "give human:RUN"),
        (["validate-judge", "--against", "human:"], "give human:RUN"),
        (["validate-judge", "--against", "human:no-such-run"], "no run 'no-such-run'"),
        (["validate-judge", "--against", "human:last"], "has no consensus labels"),
        (["validate-judge", "--against", "human:last", "--tracker", "per-turn"], "need a judge"),
        (
            ["validate-judge", "--against", "human:last", "--episodes", "5", "--seed", "2"],
            "--episodes, --seed: not used with --against",
        ),
        (["annotate", "no-such-run"], "no run 'no-such-run'"),
        (["annotate", "last", "--port", "0"], "--port"),
    ],
)
def test_bad_references_are_one_line_and_exit_2(tmp_path: Path, args: list[str], said: str) -> None:
    made = runner.invoke(
        app, ["--store", str(tmp_path), "run", "tenancy", "--model", "rule", "--budget", "2"]
    )
    assert made.exit_code == 0, made.output
    result = runner.invoke(app, ["--store", str(tmp_path), *args])
    assert result.exit_code == 2, result.output
    assert said in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
