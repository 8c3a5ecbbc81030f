"""Small builders shared by tests: run rule episodes and tweak personas."""

from __future__ import annotations

import asyncio
import sqlite3

from disputelab.agents.memos import AgentMemos
from disputelab.agents.registry import build_agent, build_parties
from disputelab.agents.settings import AgentSettings, Disclosure
from disputelab.episode import Episode, Turn
from disputelab.experiments.episodes import RunResult, run_single
from disputelab.plan.cast import Cast
from disputelab.protocols.play import play as play_protocol
from disputelab.protocols.roundtable.agents import MEDIATOR
from disputelab.scenario import Scenario, builtin_scenarios
from disputelab.scenario.schema import Strategy
from disputelab.store.chunks import decode_turns
from disputelab.store.sqlite import Store
from tests.data_location import expected_folder

# Real data nobody here wrote lies outside the project, never inside it: found through
# one setting (see tests/data_location.py); tests that read it carry
# `@pytest.mark.data(NAME)` and skip, naming the command that fetches it, without it.
AGENTMEDIATION = expected_folder("agentmediation")
AGENTMEDIATION_CASES = AGENTMEDIATION / "cases.jsonl"
PROMEDIATE = expected_folder("promediate")

# How long a test waits for a child process or a server before calling it hung: only a
# hung one gets near this, even on a 2-core machine at load 10, so no test's outcome
# depends on the machine's speed (speed is measured in benchmarks/).
WAIT_S = 600.0


def scenario(sid: str = "tenancy") -> Scenario:
    return builtin_scenarios()[sid].model_copy(deep=True)


def with_personas(
    s: Scenario, strategy: Strategy | None = None, reactivity: float | None = None
) -> Scenario:
    s = s.model_copy(deep=True)
    for p in s.parties:
        if strategy is not None:
            p.persona.strategy = strategy
        if reactivity is not None:
            p.persona.reactivity = reactivity
    return s


def run_matched(
    store: Store, s: Scenario, mediator: str = "none", seed: int = 0, budget: int = 100
) -> RunResult:
    """One stored `disputelab run` of rule parties: the episode and its unmediated twin."""
    cast = Cast({"parties": "rule", "mediator": mediator})
    return asyncio.run(run_single(store, s, cast, seed, "roundtable", {"budget": budget}))


def play(
    s: Scenario,
    mediator: str = "none",
    seed: int = 0,
    budget: int = 100,
    disclosure: Disclosure = "negotiator",
    memos: AgentMemos | None = None,
) -> Episode:
    """A roundtable episode of rule parties; `disclosure: full` has them state their whole
    acceptable sets, as every rule episode did before issue 14. `memos` are a run's, to
    share with other episodes (default: the episode's own)."""
    ep = Episode(s.id, "roundtable", seed, {"parties": "rule", "mediator": mediator})
    settings = AgentSettings(disclosure=disclosure)
    med = None if mediator == "none" else build_agent(MEDIATOR, mediator, s, seed, memos=memos)
    parties = build_parties(s, "rule", seed, settings=settings, memos=memos)
    params = {"budget": budget, "disclosure": disclosure}
    return asyncio.run(play_protocol("roundtable", s, parties, {"mediator": med}, params, ep))


def stored_turns(db: sqlite3.Connection, episode_id: str | None = None) -> list[tuple[str, int]]:
    """(episode id, turn index) of every committed turn, in order, read with SQL alone
    (as a test reads a store another process is writing): chunks of schema 8 name the
    turns they hold by their first index and count."""
    where, args = ("WHERE episode_id = ?", (episode_id,)) if episode_id else ("", ())
    rows = db.execute(
        f"SELECT episode_id, first_idx, count FROM turn_chunks {where}", args
    ).fetchall()
    return sorted((str(e), i) for e, first, n in rows for i in range(first, first + n))


def stored_turn_records(db: sqlite3.Connection) -> dict[str, list[Turn]]:
    """Every committed turn by episode, in order, decoded from its chunk with SQL and the
    chunk codec alone (no Store: a test reads a store another process is writing)."""
    out: dict[str, list[Turn]] = {}
    for eid, data in db.execute(
        "SELECT episode_id, data FROM turn_chunks ORDER BY episode_id, first_idx"
    ):
        out.setdefault(str(eid), []).extend(decode_turns(data))
    return out
