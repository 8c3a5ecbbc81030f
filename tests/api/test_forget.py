"""A participant's data is deleted by their id: the episodes they sat in, a play run
left empty, their questionnaire answers; nobody else's, and the words are gone from the
store's files, not only from its tables."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from disputelab.annotation.store import Label, read_labels, save_labels
from disputelab.api import StoreError, open_store
from disputelab.api.play import play
from disputelab.api.stores import forget_participant
from disputelab.humans import Move, SeatPrompt, validate
from disputelab.store.chunks import _MAGIC as CHUNK_MAGIC
from disputelab.web.people import save_answers, stored_answers

SECRET = "My daughter Zoltana starts school on Linden Street in May."


class Says:
    """A person who says one sentence, then presses Enter."""

    def __init__(self, first: str) -> None:
        self.first = first

    async def move(self, prompt: SeatPrompt) -> Move:
        words, self.first = self.first, ""
        return validate(prompt, {"say": words} if words else {})


def _played(store: Path, who: str, said: str) -> tuple[str, str]:
    result = play(
        "tenancy",
        seat="tenant",
        source=Says(said),
        store=store,
        budget=6,
        mediator="rule",
        participants={"tenant": who},
    )
    save_answers(store, result.run_id, result.episode_id, who, {"fair": 4, "trust": 2})
    save_labels(store, [Label(result.run_id, result.episode_id, 0, who, "norm", "1")])
    return result.run_id, result.episode_id


def _file_bytes(store: Path) -> bytes:
    """The store's files as they lie on disk, with every compressed chunk of turns found
    anywhere in them (a freed page included) inflated, so a text in one is seen."""
    raw = b"".join(p.read_bytes() for p in sorted(store.glob("*.sqlite*")) if p.is_file())
    found = [raw]
    start = raw.find(CHUNK_MAGIC)
    while start >= 0:
        with contextlib.suppress(zlib.error):
            found.append(zlib.decompressobj().decompress(raw[start + len(CHUNK_MAGIC) :]))
        start = raw.find(CHUNK_MAGIC, start + 1)
    return b"".join(found)


def test_forgetting_deletes_their_episodes_runs_and_answers_and_no_one_elses(
    tmp_path: Path,
) -> None:
    mine = _played(tmp_path, "p-forgetme", SECRET)
    theirs = _played(tmp_path, "p-keepme", "The boiler has been broken since March.")
    gone = forget_participant("p-forgetme", store=tmp_path)
    assert gone.episodes == (mine[1],) and gone.runs == (mine[0],)
    assert (gone.answers, gone.labels) == (2, 1)
    assert [x.annotator for x in read_labels(tmp_path)] == ["p-keepme"]
    store = open_store(tmp_path)
    assert [r["run_id"] for r in store.runs()] == [theirs[0]]
    assert store.load_episode(theirs[1]).episode.agents["parties:tenant_participant"] == (
        "p-keepme"
    )
    assert stored_answers(tmp_path, mine[0]) == []
    assert len(stored_answers(tmp_path, theirs[0])) == 2


def test_the_forgotten_words_are_not_left_in_the_files(tmp_path: Path) -> None:
    _played(tmp_path, "p-forgetme", SECRET)
    marker = SECRET.encode("utf-8")
    open_store(tmp_path).close()  # the log checkpointed into the database file
    assert marker in _file_bytes(tmp_path)  # a test that can fail: the words were there
    forget_participant("p-forgetme", store=tmp_path)
    assert marker not in _file_bytes(tmp_path)
    assert b"p-forgetme" not in _file_bytes(tmp_path)


def test_an_unknown_participant_deletes_nothing(tmp_path: Path) -> None:
    run_id, _ = _played(tmp_path, "p-keepme", "The boiler is broken.")
    gone = forget_participant("p-nobody", store=tmp_path)
    assert (gone.episodes, gone.runs, gone.answers) == ((), (), 0)
    assert [r["run_id"] for r in open_store(tmp_path).runs()] == [run_id]


def test_an_empty_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="participant"):
        forget_participant("  ", store=tmp_path)


def test_the_command_says_what_it_deleted(tmp_path: Path) -> None:
    _played(tmp_path, "p-forgetme", SECRET)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "disputelab",
            "--store",
            str(tmp_path),
            "runs",
            "forget",
            "p-forgetme",
            "--yes",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "deleted p-forgetme: 1 episode(s), 1 run(s), 2 questionnaire answer(s), 1 label(s)"
        in done.stdout
    )
    asked = subprocess.run(
        [sys.executable, "-m", "disputelab", "--store", str(tmp_path), "runs", "forget", "p-x"],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert asked.returncode == 2 and "pass --yes" in asked.stderr
