"""A played episode is an ordinary episode: stored with its protocol, scenario, seed and
stop reason, its seat recorded as a person's under a pseudonymous id, and read by the
report, the evaluators and the comparison like any other; a stopped one resumes from
the turn it stopped at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import disputelab as dl
from disputelab.api import PlanError, StoreError, compare, evaluate, open_store, report
from disputelab.api.play import PlayError, play
from disputelab.humans import Move, SeatPrompt, validate

WORDS = ["I want the damp fixed first.", "", "Fine: the two-year lease, then."]


class Script:
    """A person who answers from a script, then presses Enter; who stops (Ctrl-C) at
    the prompt numbered `stop_at` if set."""

    def __init__(self, said: list[str], stop_at: int | None = None) -> None:
        self.said = list(said)
        self.stop_at = stop_at
        self.asked = 0

    async def move(self, prompt: SeatPrompt) -> Move:
        self.asked += 1
        if self.stop_at is not None and self.asked == self.stop_at:
            raise KeyboardInterrupt
        words = self.said.pop(0) if self.said else ""
        return validate(prompt, {"say": words} if words else {})


def _play(store: Path, person: Script, **options: object) -> dl.api.play.PlayResult:
    return play(
        "tenancy", seat="tenant", source=person, store=store, budget=8, mediator="rule", **options
    )


def test_a_played_episode_is_stored_as_any_other_with_its_seat_a_persons(tmp_path: Path) -> None:
    result = _play(tmp_path, Script(WORDS), participants={"tenant": "p-test"})
    store = open_store(tmp_path)
    kind, config = store.run_info(result.run_id)
    assert kind == "play" and config["seats"] == ["parties:tenant"]
    record = store.load_episode(result.episode_id)
    ep = record.episode
    assert (ep.protocol, ep.scenario_id, ep.seed) == ("roundtable", "tenancy", 0)
    assert ep.outcome is not None and ep.outcome.stop_reason
    assert ep.agents["parties"] == "rule" and ep.agents["parties:tenant"] == "human"
    assert ep.agents["parties:tenant_participant"] == "p-test"
    tenant = [t for t in ep.turns if t.speaker == "tenant"]
    assert tenant[0].text == WORDS[0]
    assert tenant[1].text.startswith("My position: ")  # Enter: the choices in a sentence


def test_report_evaluate_and_compare_read_a_played_run(tmp_path: Path) -> None:
    played = _play(tmp_path, Script(WORDS))
    text = report(played.run_id, store=tmp_path)
    assert "- people: parties:tenant (p-" in text and WORDS[0] in text
    as_json = json.loads(report(played.run_id, format="json", store=tmp_path))
    assert WORDS[0] in json.dumps(as_json)
    assert "tenancy" in report(played.run_id, format="csv", store=tmp_path)
    assert "<html" in report(played.run_id, format="html", store=tmp_path)
    (scores,) = evaluate(played.run_id, store=tmp_path).values()
    assert scores["final_consensus"].value == scores["final_consensus"].value  # not NaN
    agents = dl.run("tenancy", mediator="rule", budget=8, store=tmp_path)
    board = compare([played.run_id, agents.run_id], by="run", store=tmp_path)
    shown = board.to_markdown()
    assert played.run_id in shown and agents.run_id in shown


def test_a_stopped_play_resumes_from_the_turn_it_stopped_at(tmp_path: Path) -> None:
    whole = _play(tmp_path / "whole", Script(WORDS))
    with pytest.raises(KeyboardInterrupt):
        _play(tmp_path / "cut", Script(WORDS, stop_at=3))
    store = open_store(tmp_path / "cut")
    (run_id,) = [r["run_id"] for r in store.runs()]
    (eid,) = store.episode_ids(run_id)
    kept = store.load_episode(eid)
    assert not kept.complete and len(kept.episode.turns) == 4  # two moves each, committed
    resumed = play(resume=run_id, source=Script(WORDS[2:]), store=tmp_path / "cut")
    assert resumed.resumed and resumed.replayed == 2 and not resumed.diverged
    assert resumed.episode_id == eid
    assert [t.text for t in resumed.episode.turns] == [t.text for t in whole.episode.turns]
    again = open_store(tmp_path / "cut").load_episode(eid)
    assert again.complete and len(again.episode.turns) == len(whole.episode.turns)


def test_a_finished_play_is_not_resumed(tmp_path: Path) -> None:
    result = _play(tmp_path, Script([]))
    with pytest.raises(StoreError, match="is finished"):
        play(resume=result.run_id, source=Script([]), store=tmp_path)


def test_a_run_that_is_no_play_is_not_resumed_as_one(tmp_path: Path) -> None:
    run = dl.run("tenancy", budget=4, store=tmp_path)
    with pytest.raises(PlayError, match="not a played run"):
        play(resume=run.run_id, source=Script([]), store=tmp_path)


def test_a_person_cannot_be_seated_by_run_or_an_experiment(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="mediator 'human' is a person's seat"):
        dl.plan_run("tenancy", mediator="human")
    with pytest.raises(PlanError, match="parties 'human' is a person's seat"):
        dl.plan_run("tenancy", parties="human")
    with pytest.raises(dl.api.SpecError, match="human"):
        dl.plan_experiment({"name": "x", "scenarios": ["tenancy"], "mediators": ["human"]})


@pytest.mark.parametrize(
    ("seat", "said"),
    [
        ("judge", "seat 'judge': the roundtable protocol has no such seat"),
        ("parties:nobody", "seat 'parties:nobody': no party 'nobody' in the scenario"),
        ("turn-taking", "seat turn-taking: the roundtable protocol takes rule, llm, not 'human'"),
    ],
)
def test_a_seat_that_is_not_there_is_named_in_the_plan_error(seat: str, said: str) -> None:
    with pytest.raises(PlanError) as caught:
        dl.api.play.plan_play("tenancy", seat=seat)
    assert said in str(caught.value)


def test_a_stopped_play_with_a_drawn_strategy_resumes_with_the_same_draw(tmp_path: Path) -> None:
    condition = {"condition": "strategy:competing@one", "seed": 5}
    with pytest.raises(KeyboardInterrupt):
        _play(tmp_path, Script(WORDS, stop_at=3), **condition)
    store = open_store(tmp_path)
    (run_id,) = [r["run_id"] for r in store.runs()]
    (eid,) = store.episode_ids(run_id)
    drawn = store.load_episode(eid).scenario["drawn_strategy"]
    assert drawn["strategy"] == "competing" and drawn["party"] in ("tenant", "landlord")
    resumed = play(resume=run_id, source=Script(WORDS[2:]), store=tmp_path)
    assert resumed.resumed and not resumed.diverged
    assert open_store(tmp_path).load_episode(eid).scenario["drawn_strategy"] == drawn
