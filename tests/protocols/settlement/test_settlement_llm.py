"""Model counsel over real HTTP to the scripted server: the planning counsel's candidates
come from the model within its per-turn call budget, its calls are charged to `counsel`,
the calls of one turn are distinct requests, and a cached re-run of a settlement
experiment makes no model call at all."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml

from disputelab.experiments.episodes import run_single
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import FakeOpenAI, Scripted, fake_openai, fill
from disputelab.plan.cast import Cast
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import load_spec
from disputelab.scenario.library import builtin_scenarios
from disputelab.store.sqlite import Store

CLAUSES = [
    "deadline: within 30 days of signing",
    "payment_method: bank transfer",
    "liability: statutory interest on late payment",
    "enforcement: court confirmation",
]


def answer(body: dict[str, Any]) -> Scripted:
    """Candidates around 30,000; a direct move offers 29,000."""
    fmt = (body.get("response_format") or {}).get("json_schema") or {}
    name, schema = fmt.get("name", ""), fmt.get("schema") or {"type": "object"}
    reply = fill(schema, text="We can settle on these terms.")
    move = {
        "decision": "offer",
        "clauses": CLAUSES,
        "plan": "anchor then concede",
        "utterance": "Our offer.",
    }
    if name == "settlement_candidates":
        reply = {"candidates": [{**move, "amount": 34_000.0}, {**move, "amount": 30_500.0}]}
    elif name == "settlement_move":
        reply = {**move, "amount": 29_000.0}
    elif name == "settlement_rollout":  # the other side, simulated in a rollout
        reply = {"amount": 27_500.0}
    return Scripted(content=json.dumps(reply))


def _single(tmp_path: Path, server: FakeOpenAI, kind: str, **params: Any) -> Any:
    model = f"openai:m@{server.url}"
    cast = Cast({"parties": "rule", "counsel": kind, "mediator": "rule"}, {"counsel": model})
    store = Store(tmp_path)
    hub = ModelHub(store.root / "cache.sqlite")
    sc = builtin_scenarios()["settle-unpaid-overtime"]
    return asyncio.run(
        run_single(store, sc, cast, 1, "settlement", {"round_limit": 6, **params}, hub=hub)
    )


def test_the_planning_counsel_plays_model_candidates_and_is_charged_as_counsel(
    tmp_path: Path,
) -> None:
    with fake_openai(answer) as server:
        result = _single(tmp_path, server, "llm-mcts", max_model_calls=2, candidates=2)
        calls = server.calls
    ep = result.episode
    own = [t for t in ep.turns if t.speaker == "okafor"]
    assert own and all("plan:" in t.action.thought for t in own)  # type: ignore[union-attr]
    assert any("model" in t.action.thought.split(";")[0] for t in own)  # type: ignore[union-attr]
    assert ep.usage["counsel"].calls == calls == 2 * len(own)  # two calls per turn, the budget
    assert "parties" not in ep.usage  # the rule opponent calls nothing
    assert ep.agents["counsel"] == "llm-mcts"


def test_the_calls_of_one_turn_are_distinct_requests(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        _single(tmp_path, server, "llm-mcts", max_model_calls=2, candidates=2, round_limit=2)
        bodies = [json.dumps(r["messages"]) for r in server.requests]
    assert len(bodies) == 2 and bodies[0] != bodies[1]


def test_the_direct_model_counsel_makes_one_call_per_turn(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        result = _single(tmp_path, server, "llm-direct")
        calls = server.calls
    own = [t for t in result.episode.turns if t.speaker == "okafor"]
    assert calls == len(own) and own[0].action.offer == {"amount": 29_000.0}  # type: ignore[union-attr]


def _spec(tmp_path: Path, name: str, url: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": name,
                "protocol": "settlement",
                "scenarios": ["settle-unpaid-overtime", "settle-wage-arrears-zh"],
                "mediators": ["llm-mcts", "llm-direct"],
                "parties": "rule",
                "models": {"counsel": f"openai:m@{url}"},
                "params": {"round_limit": 4, "simulations": 4, "max_model_calls": 2},
                "replicates": 1,
            }
        )
    )
    return path


def _run_spec(store: Store, spec_path: Path, spec_dir: Path) -> None:
    hub = ModelHub(store.root / "cache.sqlite")

    async def go() -> None:
        try:
            await run_experiment(store, plan_experiment(load_spec(spec_path), base=spec_dir), hub)
        finally:
            await hub.aclose()

    asyncio.run(go())


def test_a_cached_rerun_of_a_settlement_experiment_makes_no_model_call(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    with fake_openai(answer) as server:
        _run_spec(store, _spec(tmp_path, "first", server.url), tmp_path)
        first_calls = server.calls
        _run_spec(store, _spec(tmp_path, "again", server.url), tmp_path)
        assert first_calls > 0
        assert server.calls == first_calls  # the re-run was served entirely from the cache
    assert len(store.complete_episode_ids("again")) == 4


def accept_always(body: dict[str, Any]) -> Scripted:
    """A model that always 'accepts', even before the other side has offered anything."""
    move = {"decision": "accept", "amount": 1.0, "clauses": [], "plan": "", "utterance": "Deal."}
    return Scripted(content=json.dumps({"candidates": [move]}))


def test_unusable_model_candidates_fall_back_to_the_curve_and_still_cost_their_calls(
    tmp_path: Path,
) -> None:
    with fake_openai(accept_always) as server:
        result = _single(tmp_path, server, "llm-mcts", round_limit=2)
        calls = server.calls
    first = next(t for t in result.episode.turns if t.speaker == "okafor")
    assert first.action is not None and first.action.offer == {"amount": 41_000.0}  # the curve
    assert calls == 3  # one call and its two re-asks, all charged
    assert result.episode.usage["counsel"].calls == 3


def _schemas(server: FakeOpenAI) -> list[str]:
    return [r["response_format"]["json_schema"]["name"] for r in server.requests]


def test_rollouts_ask_the_counsel_model_when_asked_and_are_charged_apart(
    tmp_path: Path,
) -> None:
    with fake_openai(answer) as server:
        result = _single(
            tmp_path, server, "llm-mcts", candidates=2, rollout_model="counsel", rollout_calls=2
        )
        names, requests = _schemas(server), list(server.requests)
    ep = result.episode
    own = [t for t in ep.turns if t.speaker == "okafor"]
    asked = names.count("settlement_rollout")
    assert 1 <= asked <= 2 * len(own)  # within the per-turn budget
    assert ep.usage["counsel.rollout"].calls == asked  # cost per role: the rollouts' own
    assert ep.usage["counsel"].calls == names.count("settlement_candidates") == len(own)
    rollout = next(
        r for r in requests if r["response_format"]["json_schema"]["name"] == ("settlement_rollout")
    )
    prompt = json.dumps(rollout["messages"], ensure_ascii=False)
    # From the acting side's information only: the other side's private brief is not in it.
    assert "You act for Northgate" not in prompt and "simulate the other side" in prompt


def test_without_rollout_model_the_rollouts_call_nothing(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        result = _single(tmp_path, server, "llm-mcts", candidates=2)
        names = _schemas(server)
    assert "settlement_rollout" not in names
    assert "counsel.rollout" not in result.episode.usage
