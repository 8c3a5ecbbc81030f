"""A new protocol is one module plus its agents: this file registers a toy protocol, an
agent kind for its one new seat and an evaluator, touching no other module, and runs it
through `disputelab run`, an experiment and a report.

The toy ("show of hands"): a chair opens each round, every party speaks once, and the
round ends with the chair counting hands. It stops when every party signals consensus or
after `rounds` rounds. The chair hears each party's words in upper case (a per-listener
delivery), and its (pretend) model calls are charged under its own usage role.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from pydantic import Field
from typer.testing import CliRunner

from disputelab.agents.base import Agent, PublicTurn, TurnContext, UsageReporter
from disputelab.agents.registry import AGENT_KINDS, PARTY, AgentKind, register_kind
from disputelab.cli import app
from disputelab.episode import Intervention, Outcome, Status, Usage
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.registry import (
    EVALUATORS,
    EpisodeToScore,
    Evaluator,
    ScoringContext,
    register_evaluator,
)
from disputelab.protocols.base import (
    PROTOCOLS,
    DisputeProtocol,
    ProtocolParams,
    Seat,
    register_protocol,
)
from disputelab.protocols.session import Session
from disputelab.store.sqlite import Store

CHAIR = "toy-chair"  # the new seat's interface
CHAIRS: list[Chair] = []  # every chair built, so a test can ask what it heard


class Chair(UsageReporter):
    """Opens each round and counts hands; pretends each call cost one model call."""

    name = "counter"

    def __init__(self) -> None:
        self.heard: list[str] = []
        CHAIRS.append(self)

    async def open_round(self, dialogue: Sequence[PublicTurn], r: int) -> Intervention:
        self.heard = [t.text for t in dialogue if t.role == "party"]
        self.report_usage(Usage(calls=1, input_tokens=10 * r, output_tokens=5))
        return Intervention(f"Round {r}: hands up when you can accept.")


class ToyParams(ProtocolParams):
    rounds: int = Field(default=3, ge=1, le=50, description="Rounds of hands.")


class ShowOfHands(DisputeProtocol):
    name = "show-of-hands"
    summary = "a chair calls rounds; parties speak once each round"
    Params = ToyParams
    seats = (Seat("parties", PARTY, per_party=True), Seat("chair", CHAIR, default="counter"))
    evaluators = ("toy-hands",)

    async def play(
        self, session: Session, seated: Mapping[str, Agent | None], params: ProtocolParams
    ) -> Outcome:
        assert isinstance(params, ToyParams)
        chair = seated["chair"]
        assert isinstance(chair, Chair)
        for r in range(1, params.rounds + 1):
            t0 = time.perf_counter()
            move = await chair.open_round(session.view("chair"), r)
            session.seat_spoke("chair", chair, move, time.perf_counter() - t0, speaker="chair")
            for agent in session.parties:
                budget = params.rounds * session.n
                action = await agent.act(
                    session.view(agent.party_id), TurnContext(session.party_turn, budget, session.n)
                )
                loud = {"chair": action.utterance.upper()}
                session.party_spoke(agent, action, 0.0, delivered=loud)
            if session.all_signalled_consensus():
                return Outcome(
                    Status.RESOLVED, f"all hands up in round {r}", session.common_ground()
                )
        return Outcome(Status.BUDGET, f"{params.rounds} rounds without all hands up")


async def _hands(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
    rounds = sum(1 for t in item.episode.turns if t.speaker == "chair")
    return {"rounds_played": MetricResult(float(rounds), "chair turns in the episode")}


@pytest.fixture
def toy() -> Iterator[None]:
    register_protocol(ShowOfHands())
    register_kind(AgentKind(CHAIR, "counter", "counts hands", lambda s: Chair()))
    register_evaluator(Evaluator("toy-hands", "1", "rounds the chair called", _hands))
    yield
    PROTOCOLS.unregister("show-of-hands")
    AGENT_KINDS.unregister(f"{CHAIR}/counter")
    EVALUATORS.unregister("toy-hands")


def _cli(store: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["--store", str(store), *args])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_protocols_list_shows_the_toy_with_its_parameters_and_seats(
    toy: None, tmp_path: Path
) -> None:
    text = _cli(tmp_path, "protocols", "list")
    assert "show-of-hands" in text and "rounds=3" in text and "counter" in text


def test_disputelab_run_plays_the_toy_and_scores_it_with_its_evaluator(
    toy: None, tmp_path: Path
) -> None:
    text = _cli(
        tmp_path,
        "run",
        "tenancy",
        "--protocol",
        "show-of-hands",
        "--param",
        "rounds=2",
        "--seed",
        "1",
    )
    assert "rounds_played" in text
    store = Store(tmp_path)
    (eid,) = store.episode_ids(store.resolve_run("last"))
    rec = store.load_episode(eid)
    assert rec.episode.protocol == "show-of-hands" and rec.complete
    assert rec.episode.agents == {"parties": "rule", "chair": "counter"}
    chair_turns = [t for t in rec.episode.turns if t.speaker == "chair"]
    assert 1 <= len(chair_turns) <= 2
    # The chair heard every party in upper case; the store keeps what was said and what it heard.
    party = next(t for t in rec.episode.turns if t.role == "party")
    assert party.delivered == {"chair": party.text.upper()}
    said = [t.text for t in rec.episode.turns if t.role == "party"]
    assert CHAIRS[-1].heard == [t.upper() for t in said[: len(CHAIRS[-1].heard)]] != []
    # Its calls are charged under its own role.
    (usage,) = [u for u in store.usage(eid) if u["role"] == "chair"]
    assert usage["calls"] == len(chair_turns)
    (score,) = [s for s in store.scores(eid) if s.evaluator == "toy-hands"]
    assert score.value == len(chair_turns)


def test_a_parameter_the_toy_does_not_have_is_refused(toy: None, tmp_path: Path) -> None:
    r = CliRunner().invoke(
        app,
        [
            "--store",
            str(tmp_path),
            "run",
            "tenancy",
            "--protocol",
            "show-of-hands",
            "--param",
            "speed=9",
        ],
    )
    assert r.exit_code == 2
    assert "not a parameter of the show-of-hands protocol" in " ".join(r.output.split())


def test_an_experiment_runs_the_toy_and_reports_it(toy: None, tmp_path: Path) -> None:
    spec = tmp_path / "toy.yaml"
    spec.write_text(
        "name: toy-grid\nprotocol: show-of-hands\nscenarios: [tenancy, workplace]\n"
        "mediators: [counter]\nreplicates: 2\nrounds: 2\n",
        encoding="utf-8",
    )
    text = _cli(tmp_path, "experiment", str(spec))
    assert "4 episodes planned, 4 run" in text
    config = Store(tmp_path).run_info("toy-grid")[1]
    assert config["protocol"] == "show-of-hands" and config["params"] == {"rounds": 2}
    report = _cli(tmp_path, "report", "toy-grid")
    assert "show-of-hands protocol" in report and "rounds_played" in report
    r = CliRunner().invoke(app, ["--store", str(tmp_path), "report", "toy-grid", "--format", "csv"])
    header, *rows = r.output.strip().splitlines()
    assert len(rows) == 4 and "rounds_played" in header
