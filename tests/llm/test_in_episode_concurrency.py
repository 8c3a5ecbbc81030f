"""Concurrency inside an episode changes nothing stored: each protocol's episode, played
with a step's independent calls sent together and again with `sequential()`, is the same
turn for turn, and so are its scores and the judges' trajectories.

The server answers from the request alone (a hash of its messages picks the words, the
numbers and the decisions) and holds each reply for a random few milliseconds, so calls
sent together come back in a different order from run to run. Any agent that saw
something else in one run would be answered differently, and the episodes would differ.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from disputelab.evaluation.trackers import Trajectory, per_turn, topic_localized
from disputelab.experiments.episodes import RunResult, run_single
from disputelab.llm.concurrency import sequential
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import (
    FakeOpenAI,
    Scripted,
    fake_openai,
    fill,
    requested_name,
    requested_schema,
)
from disputelab.plan.cast import Cast
from disputelab.protocols.bilateral.agents.exemplars import Exemplar
from disputelab.protocols.bilateral.agents.norms import CATEGORIES
from disputelab.protocols.bilateral.remediation.simulate import Cast as RemediationCast
from disputelab.protocols.bilateral.remediation.value import (
    Rollouts,
    ValueImpact,
    build_rollouts,
)
from disputelab.scenario.library import builtin_scenarios
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import Store
from tests.helpers import play, scenario

_jitter = random.Random()  # unseeded on purpose: the order of replies must vary


def _digest(body: dict[str, Any]) -> int:
    text = json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def _overrides(name: str, h: int) -> dict[str, Any]:
    """What a role's reply needs beyond a filled schema, varied with the request."""
    amount = 26_000.0 + 500 * (h % 16)
    move = {"decision": "offer", "clauses": [], "plan": "p", "utterance": f"offer {h % 97}"}
    return {
        "verdict": {"decision": ("accept", "uncertain", "reject")[h % 3]},
        "motivation": {"rating": float(1 + h % 5), "reason": f"r{h % 89}"},
        "settlement_candidates": {
            "candidates": [{**move, "amount": amount}, {**move, "amount": amount + 1500}]
        },
        "settlement_move": {**move, "amount": amount},
        "settlement_rollout": {"amount": amount - 1000},
        "callreply": {"ended": False, "deal": False, "price": 30 + h % 20},
        "detectreply": {"violates": h % 2 == 0, "category": "insulting"},
        "topic_events": {"events": []},
    }.get(name, {})


def answer(body: dict[str, Any]) -> Scripted:
    """A reply made from the request alone, after a random short delay."""
    h = _digest(body)
    name = requested_name(body)
    reply = fill(requested_schema(body), text=f"{name} {h % 1000}")
    if isinstance(reply, dict):
        reply |= _overrides(name, h)
        if "price" in reply and name != "callreply":
            reply["price"] = 35 + h % 15
    return Scripted(content=json.dumps(reply, ensure_ascii=False), delay_s=_jitter.uniform(0, 0.02))


def _stored(store: Store, result: RunResult) -> str:
    """The stored episode and its scores, without the clock's readings."""
    episode = asdict(store.load_episode(result.episode_id).episode)
    scores = [
        (s.evaluator, s.metric, s.value, s.explanation, s.detail)
        for s in store.scores(result.episode_id)
    ]
    data = _timeless({"episode": episode, "scores": scores})
    return json.dumps(data, sort_keys=True, default=str)


def _timeless(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _timeless(v) for k, v in data.items() if k not in ("latency_s", "wall_time_s")}
    if isinstance(data, list | tuple):
        return [_timeless(v) for v in data]
    return data


Play = Callable[[Path, FakeOpenAI], tuple[Store, RunResult]]


def _player(
    protocol: str, sc: Callable[[], Scenario], kinds: dict[str, str], params: dict[str, Any]
) -> Play:
    def go(tmp: Path, server: FakeOpenAI) -> tuple[Store, RunResult]:
        model = f"openai:m@{server.url}"
        roles = {*kinds, "parties", "judge"}
        cast = Cast(kinds, dict.fromkeys(roles, model))
        store = Store(tmp)
        hub = ModelHub(None)  # no cache: every call reaches the server

        async def run() -> RunResult:
            try:
                return await run_single(store, sc(), cast, 2, protocol, params, hub=hub)
            finally:
                await hub.aclose()

        return store, asyncio.run(run())

    return go


PROTOCOLS: dict[str, Play] = {
    "roundtable-motivated": _player(
        "roundtable",
        lambda: scenario("community-centre"),
        {"parties": "llm", "mediator": "none"},
        {"budget": 8, "turn_taking": "motivated"},
    ),
    "staged": _player(
        "staged", lambda: scenario("tenancy"), {"parties": "llm", "mediator": "llm"}, {"rounds": 2}
    ),
    "staged-reflection": _player(
        "staged",
        lambda: scenario("tenancy"),
        {"parties": "llm", "mediator": "llm"},
        {"rounds": 2, "party_reflection": True},
    ),
    "settlement-tree-search": _player(
        "settlement",
        lambda: builtin_scenarios()["settle-unpaid-overtime"],
        {"parties": "rule", "counsel": "llm-mcts", "mediator": "rule"},
        {"round_limit": 6, "max_model_calls": 2, "candidates": 2, "rollout_model": "counsel"},
    ),
    "bilateral-remediator": _player(
        "bilateral",
        lambda: scenario("product-sale"),
        {"parties": "llm", "mediator": "random-icl"},
        {"violation_prob": 1.0, "max_rounds": 4, "embedding": "lexical"},
    ),
}


def _played(
    play_one: Play, tmp: Path, server: FakeOpenAI, mode: AbstractContextManager[None]
) -> tuple[str, int, int]:
    """The stored episode, the calls made and the most calls the server held at once.
    Both runs of a test use one server: the model's name, its address, is stored too."""
    with server.lock:
        server.max_in_flight = 0
    before = server.calls
    with mode:
        store, result = play_one(tmp, server)
    return _stored(store, result), server.calls - before, server.max_in_flight


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_an_episode_played_with_calls_together_is_stored_as_the_sequential_one(
    tmp_path: Path, name: str
) -> None:
    with fake_openai(answer) as server:
        together, calls, _ = _played(PROTOCOLS[name], tmp_path / "a", server, nullcontext())
        one_by_one, calls_one_by_one, most = _played(
            PROTOCOLS[name], tmp_path / "b", server, sequential()
        )
    assert calls > 0 and calls == calls_one_by_one
    assert most == 1  # one after another: never two calls at the server at once
    assert together == one_by_one


class Rendezvous(FakeOpenAI):
    """Holds the first call of a step that should overlap until a second call is in
    flight beside it, so that overlap never hangs on how fast the first one is served
    (the hold gives up after `patience` seconds: calls sent one by one never meet). A
    minute, not seconds: at load 10 a second call sent together may take a while to be
    read, and only a step that does not overlap waits that long."""

    def __init__(self, held: set[str], patience: float = 60.0) -> None:
        super().__init__(answer)
        self.held = held
        self.patience = patience

    def _begin_request(
        self, body: dict[str, Any], headers: dict[str, str], path: str, client: tuple[str, int]
    ) -> Scripted:
        reply = super()._begin_request(body, headers, path, client)
        if requested_name(body) in self.held and self.max_in_flight < 2:
            end = time.monotonic() + self.patience
            while self.in_flight < 2 and time.monotonic() < end:
                time.sleep(0.002)
        return reply


@contextmanager
def rendezvous(*held: str) -> Iterator[Rendezvous]:
    server = Rendezvous(set(held))
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


OVERLAPPING = {
    "roundtable-motivated": "thoughts",
    "staged": "verdict",
    "staged-reflection": "terms_note",
    "settlement-tree-search": "settlement_candidates",
}


@pytest.mark.parametrize("name", list(OVERLAPPING))
def test_a_step_with_independent_calls_sends_them_together(tmp_path: Path, name: str) -> None:
    """The parties' thinking, the closure's verdicts, a party's self-check and terms note
    and the planner's candidate calls reach the server side by side (a protocol whose
    every call waits on the last, as the bilateral one's do, has nothing to overlap)."""
    with rendezvous(OVERLAPPING[name]) as server:
        _, _, most = _played(PROTOCOLS[name], tmp_path, server, nullcontext())
    assert most >= 2


@pytest.fixture
def judged_episode() -> Iterator[tuple[Any, Scenario]]:
    s = scenario("tenancy")
    yield play(s, "none", seed=0, budget=6), s


def _trajectory(tracker: Any, episode: Any, s: Scenario, server: FakeOpenAI) -> Trajectory:
    hub = ModelHub(None)

    async def run() -> Trajectory:
        try:
            result: Trajectory = await tracker(episode, s, hub.model(f"openai:j@{server.url}", "j"))
            return result
        finally:
            await hub.aclose()

    return asyncio.run(run())


@pytest.mark.parametrize(
    "tracker", [topic_localized, per_turn], ids=["topic-localized", "per-turn"]
)
def test_a_judge_asked_per_topic_and_pair_together_gives_the_sequential_trajectory(
    judged_episode: tuple[Any, Scenario], tracker: Any
) -> None:
    episode, s = judged_episode
    with rendezvous("topic_events", "agreement") as server:
        together = _trajectory(tracker, episode, s, server)
        overlapped = server.max_in_flight
    # A server of its own: the rendezvous would hold every call sent one by one.
    with fake_openai(answer) as server, sequential():
        one_by_one = _trajectory(tracker, episode, s, server)
        most = server.max_in_flight
    assert overlapped >= 2 and most == 1
    assert together.failure is None and together.calls == one_by_one.calls
    # As JSON, where NaN (a topic no event located) equals NaN.
    assert json.dumps(together.by_topic) == json.dumps(one_by_one.by_topic)
    assert together.stances == one_by_one.stances


def test_calls_sent_together_stay_within_the_endpoints_limit(tmp_path: Path) -> None:
    """Four parties' verdicts at the staged closure, an endpoint that takes two at once:
    two reach the server together, never more."""
    with rendezvous("verdict") as server:
        model = f"openai:m@{server.url}"
        cast = Cast({"parties": "llm", "mediator": "llm"}, {"parties": model, "mediator": model})
        hub = ModelHub(None, concurrency=2)

        async def run() -> RunResult:
            try:
                sc = scenario("community-centre")
                return await run_single(Store(tmp_path), sc, cast, 2, "staged", {}, hub=hub)
            finally:
                await hub.aclose()

        result = asyncio.run(run())
        most = server.max_in_flight
    verdicts = [t for t in result.episode.turns if t.action and t.action.verdict]
    assert len(verdicts) == 4
    assert most == 2


def _value_of_a_set(server: FakeOpenAI, rollouts: Rollouts) -> tuple[float, int]:
    """A set's value impact over the rollouts, with a model remediator: its value, and
    the episodes' model calls."""
    hub = ModelHub(None)
    cast = RemediationCast(remediator_model=hub.model(f"openai:m@{server.url}", "mediator"))
    pool = [Exemplar(c, "s", c, (), "v", "r", "alternatives") for c in CATEGORIES]

    async def run() -> float:
        try:
            return await ValueImpact(pool, rollouts, cast)(tuple(CATEGORIES))
        finally:
            await hub.aclose()

    return asyncio.run(run()), sum(cast.calls.values())


def test_a_sets_rollouts_played_together_value_it_as_played_one_by_one() -> None:
    """The remediation search's rollouts are episodes of their own: played together,
    their model calls overlap, and the set's value is the same to the last bit."""
    rollouts = asyncio.run(build_rollouts(3, 0, RemediationCast()))  # chosen offline
    with rendezvous("rewrite") as server:
        together, calls = _value_of_a_set(server, rollouts)
        overlapped = server.max_in_flight
    with fake_openai(answer) as server, sequential():
        one_by_one, calls_one_by_one = _value_of_a_set(server, rollouts)
        most = server.max_in_flight
    assert calls > 0 and calls == calls_one_by_one
    assert overlapped >= 2 and most == 1
    assert together == one_by_one
