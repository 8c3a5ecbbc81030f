"""Runs to render as HTML reports, and ways to read a rendered page back."""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from disputelab import api
from disputelab.cli import app
from disputelab.evaluation.metrics import MetricResult
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.roundtable.evaluation import socrates
from disputelab.report.serve import ReportServer
from disputelab.scenario.io import dump_scenario
from disputelab.store.sqlite import Store
from tests.helpers import scenario

# Each one, were it markup, would set window.__pwned. Short enough for the schema's
# bounds on names (120 characters) and titles (200).
SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=1">'
JS_URL = "javascript:window.__pwned=1"
PAYLOADS = (SCRIPT, IMG, JS_URL)


def cli(store: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["--store", str(store), *args])
    assert result.exit_code == 0, result.output
    return result.output


def motivated_run(store: Path, budget: int = 24) -> str:
    """A mediated tenancy run under motivated turn-taking, whose rule parties keep
    private thoughts on every turn; returns its run id."""
    cli(
        store,
        "run",
        "tenancy",
        "--mediator",
        "rule",
        "--turn-taking",
        "motivated",
        "--budget",
        str(budget),
    )
    return Store(store).resolve_run("last")


def small_experiment(root: Path, name: str = "small") -> Store:
    """A rule experiment of 28 episodes (tenancy x two conditions x 7 replicates x twin
    and rule mediator): more than one block of embedded episodes in its report."""
    store = Store(root)
    spec = ExperimentSpec(
        name=name,
        scenarios=["tenancy"],
        conditions=["general", "posture:competing"],
        replicates=7,
        budget=20,
    )
    asyncio.run(run_experiment(store, plan_experiment(spec, base=root), ModelHub(None)))
    return store


def payload_scenario(path: Path) -> Path:
    """The tenancy dispute with the payloads in its title, party names, topic names and
    option labels; the rule voice repeats topic names and labels in every utterance."""
    s = scenario("tenancy")
    s.title = f"Flat {SCRIPT} {IMG} {JS_URL}"
    s.parties[0].name = f"Mira {SCRIPT}"
    s.parties[1].name = f"Harold {IMG}"
    s.topics[0].name = f"Repairs {IMG}"
    s.topics[1].name = f"Rent {SCRIPT}"
    s.topics[0].options[0].label = JS_URL
    s.topics[1].options[0].label = f"{SCRIPT} paid"
    path.write_text(dump_scenario(s), encoding="utf-8")
    return path


def embedded(html: str, element_id: str) -> Any:
    """The JSON in the page's `<script type="application/json" id=...>` element."""
    m = re.search(
        rf'<script type="application/json" id="{re.escape(element_id)}">(.*?)</script>', html, re.S
    )
    assert m is not None, f"no JSON element {element_id}"
    return json.loads(m.group(1))


def episodes(html: str) -> list[dict[str, Any]]:
    """Every episode the page embeds, across its blocks, in order."""
    count = embedded(html, "report-meta")["count"]
    out: list[dict[str, Any]] = []
    i = 0
    while len(out) < count:
        out += embedded(html, f"episodes-{i}")
        i += 1
    return out


def store_with_gains(tmp_path: Path, gains: list[MetricResult]) -> Store:
    """A roundtable grid over the first len(gains) built-in scenarios, its mediated
    episodes given these consensus gains in scenario order."""
    store = Store(tmp_path)
    spec = ExperimentSpec(
        name="g",
        scenarios=["tenancy", "workplace", "boundary-wall"][: len(gains)],
        replicates=1,
        budget=12,
    )
    asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), ModelHub(None)))
    mediated = sorted(e for e in store.complete_episode_ids("g") if "/rule/" in e)
    for eid, gain in zip(mediated, gains, strict=True):
        store.add_scores(eid, socrates.EVALUATOR, socrates.VERSION, {"consensus_gain": gain})
    return store


def three_runs(root: Path) -> tuple[str, str, str]:
    """Two rule-mediated tenancy runs that differ only in their turn budget (so they
    pair by run on scenario, condition and seed) and a one-replicate experiment `plain`
    (its rule mediator and unmediated twin pair by mediator): their run ids."""
    short = api.run("tenancy", store=root, mediator="rule", budget=10).run_id
    long = api.run("tenancy", store=root, mediator="rule", budget=24).run_id
    api.experiment({"name": "plain", "scenarios": ["tenancy"], "replicates": 1}, store=root)
    return short, long, "plain"


@contextmanager
def serving(root: Path) -> Iterator[ReportServer]:
    """The `view` server of the store at `root`, on loopback at a free port."""
    srv = ReportServer(root, quiet=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def fetch(
    srv: ReportServer,
    path: str,
    method: str = "GET",
    host: str | None = None,
    timeout_s: float = 120,
) -> tuple[int, dict[str, str], str]:
    """The server's status, headers and page for one request (`host`: the Host header
    to send instead of the server's own address)."""
    address, port = srv.server_address[:2]
    conn = http.client.HTTPConnection(str(address), int(port), timeout=timeout_s)
    try:
        conn.putrequest(method, path, skip_host=host is not None)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read().decode("utf-8")
    finally:
        conn.close()
