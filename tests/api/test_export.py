"""A run's tidy tables: one row per turn (a person's seat named as theirs, with their
pseudonymous id and timings), one row per structured part of a move, the questionnaire
answers; written as Parquet files by `report --format parquet --out FOLDER/`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from disputelab.annotation.store import Label, save_labels
from disputelab.api import open_store
from disputelab.api.export import TABLES, tables
from disputelab.api.play import play
from disputelab.humans import Move, SeatPrompt, validate
from disputelab.web.people import save_answers

pytest.importorskip("pyarrow", reason="Parquet needs pyarrow")


class Enter:
    """A person who presses Enter at every prompt: holds the position shown."""

    async def move(self, prompt: SeatPrompt) -> Move:
        return validate(prompt, {})


@pytest.fixture
def played(tmp_path: Path) -> tuple[Path, str]:
    result = play(
        "tenancy",
        seat="tenant",
        source=Enter(),
        store=tmp_path,
        budget=6,
        mediator="rule",
        participants={"tenant": "p-export"},
    )
    save_answers(tmp_path, result.run_id, result.episode_id, "p-export", {"fair": 5})
    stance = Label(result.run_id, result.episode_id, 1, "a-1", "stance", "rent", "tenant", "rent")
    save_labels(tmp_path, [stance])
    return tmp_path, result.run_id


def test_every_turn_is_a_row_naming_who_filled_the_seat(played: tuple[Path, str]) -> None:
    store, run_id = played
    turns = tables(run_id, store=store)["turns"]
    (episode_id,) = open_store(store).episode_ids(run_id)
    stored = open_store(store).load_episode(episode_id).episode.turns
    assert list(turns["index"]) == [t.index for t in stored]
    person = turns[turns.speaker == "tenant"]
    assert set(person.seat) == {"human"} and set(person.participant) == {"p-export"}
    others = turns[turns.speaker != "tenant"]
    assert set(others.seat) == {"rule"} and set(others.participant) == {""}


def test_each_stance_of_a_move_is_a_row_of_its_own(played: tuple[Path, str]) -> None:
    store, run_id = played
    actions = tables(run_id, store=store)["actions"]
    (episode_id,) = open_store(store).episode_ids(run_id)
    turns = open_store(store).load_episode(episode_id).episode.turns
    expected = {
        (t.index, topic, s.option or "")
        for t in turns
        if t.action is not None
        for topic, s in t.action.stances.items()
    }
    stances = actions[actions.part == "stance"]
    assert set(zip(stances["index"], stances.key, stances.value, strict=True)) == expected
    assert expected  # the scenario has topics: the table is not trivially empty


def test_the_folder_holds_one_parquet_file_per_table(played: tuple[Path, str]) -> None:
    store, run_id = played
    folder = store.parent / "tables"
    done = subprocess.run(
        [sys.executable, "-m", "disputelab", "--store", str(store), "report", run_id,
         "--format", "parquet", "--out", str(folder)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(p.stem for p in folder.glob("*.parquet")) == sorted(TABLES)
    answers = pd.read_parquet(folder / "answers.parquet")
    assert answers.to_dict("records") == [
        {"run_id": run_id, "episode_id": answers.episode_id[0], "participant": "p-export",
         "item": "fair", "value": 5}
    ]  # fmt: skip
    labels = pd.read_parquet(folder / "labels.parquet")
    assert list(labels[["turn", "annotator", "kind", "party", "topic"]].iloc[0]) == [
        1, "a-1", "stance", "tenant", "rent"
    ]  # fmt: skip
    episodes = pd.read_parquet(folder / "episodes.parquet")
    assert list(episodes.run_id) == [run_id]
