"""By people: the episodes a person played against the agents' own episodes of the same
scenario and seed, in one table: each seat people filled is an arm, the agents another,
and the paired difference is person against agent with everything else held."""

from __future__ import annotations

from pathlib import Path

import disputelab as dl
from disputelab.api import compare, evaluate
from disputelab.api.play import play
from disputelab.compare.episodes import AGENTS, arm_of, match_of, people_of
from disputelab.humans import Move, SeatPrompt, validate


class Enter:
    async def move(self, prompt: SeatPrompt) -> Move:
        return validate(prompt, {})


def _people_and_agents(store: Path, seeds: range) -> list[str]:
    runs = []
    for seed in seeds:
        played = play(
            "tenancy", seat="tenant", source=Enter(), store=store, budget=6, mediator="rule",
            seed=seed,
        )  # fmt: skip
        agents = dl.run("tenancy", mediator="rule", budget=6, seed=seed, store=store)
        # A person has no hidden state for the oracle: both sides are measured from
        # the stances declared, as a person's episode is scored when it ends.
        evaluate(agents.run_id, "self-report", store=store)
        runs += [played.run_id, agents.run_id]
    return runs


def test_the_seats_people_filled_name_the_arm() -> None:
    agents = {"parties": "rule", "parties:tenant": "human", "parties:tenant_participant": "p-1"}
    assert people_of(agents) == "parties:tenant"
    assert people_of({"parties": "rule"}) == ""
    assert people_of({**agents, "mediator_participant": "p-2"}) == "mediator,parties:tenant"


def test_people_and_agents_are_compared_in_one_table_on_paired_seeds(tmp_path: Path) -> None:
    runs = _people_and_agents(tmp_path, range(3))
    board = compare(runs, by="people", metric="tracker:self-report.final_consensus", store=tmp_path)
    assert set(board.arms) == {"people at parties:tenant", AGENTS}
    (difference,) = board.differences
    assert difference.pairs == 3  # one pair a seed: the person's episode and the agents'
    assert "people at parties:tenant" in board.to_markdown()
    column = board.estimates["tracker:self-report.final_consensus"]
    # the agents' unmediated twins are left out: the people were all mediated
    assert (column[AGENTS].episodes, column["people at parties:tenant"].episodes) == (3, 3)


def test_a_persons_episode_pairs_across_runs_whatever_its_run() -> None:
    from disputelab.compare.episodes import Played

    person = Played("r1", "e1", "tenancy", "general", 4, "rule", "rule", False, False, {}, {},
                    "parties:tenant")  # fmt: skip
    agent = Played("r2", "e2", "tenancy", "general", 4, "rule", "rule", False, False, {}, {})
    assert match_of(person, "people") == match_of(agent, "people")
    assert (arm_of(person, "people"), arm_of(agent, "people")) == (
        "people at parties:tenant",
        AGENTS,
    )
