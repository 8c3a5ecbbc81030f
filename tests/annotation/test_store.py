"""The label store: labels come back as saved, a label saved again replaces its value,
a bad label keeps nothing of its batch, and a participant's withdrawal removes exactly
their rows."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disputelab.annotation.store import (
    ANNOTATIONS_FILE,
    EPISODE_WIDE,
    Label,
    LabelError,
    delete_participant,
    read_labels,
    save_labels,
)

_ids = st.sampled_from(["a", "b", "ann-1", "x y"])


@st.composite
def labels(draw: st.DrawFn) -> Label:
    kind = draw(st.sampled_from(["stance", "consensus", "rubric", "norm"]))
    base = {
        "run": draw(st.sampled_from(["r1", "r2"])),
        "episode": draw(st.sampled_from(["e1", "e2"])),
        "annotator": draw(_ids),
        "kind": kind,
    }
    turn = EPISODE_WIDE if kind == "rubric" else draw(st.integers(0, 5))
    if kind == "stance":
        value = draw(st.sampled_from(["A", "B", "none"]))
        return Label(**base, turn=turn, value=value, party=draw(_ids), topic=draw(_ids))
    if kind == "consensus":
        return Label(**base, turn=turn, value=str(draw(st.integers(1, 5))), topic=draw(_ids))
    if kind == "rubric":
        return Label(**base, turn=turn, value=str(draw(st.integers(1, 5))), item=draw(_ids))
    return Label(**base, turn=turn, value=draw(st.sampled_from(["0", "1"])))


def _key(x: Label) -> tuple[object, ...]:
    return (x.run, x.episode, x.turn, x.annotator, x.kind, x.party, x.topic, x.item)


@settings(max_examples=40, deadline=None)
@given(st.lists(labels(), max_size=30), st.lists(labels(), max_size=10))
def test_what_is_read_is_the_last_value_of_each_label(
    first: list[Label], second: list[Label]
) -> None:
    with tempfile.TemporaryDirectory() as where:
        _check_last_values(Path(where), first, second)


def _check_last_values(root: Path, first: list[Label], second: list[Label]) -> None:
    save_labels(root, first)
    save_labels(root, second)
    expected: dict[tuple[object, ...], Label] = {}
    for label in [*first, *second]:
        expected[_key(label)] = label
    assert read_labels(root) == sorted(expected.values())
    for run in ("r1", "r2"):
        assert read_labels(root, run) == sorted(x for x in expected.values() if x.run == run)


@settings(max_examples=30, deadline=None)
@given(st.lists(labels(), min_size=1, max_size=30), _ids)
def test_withdrawal_removes_exactly_that_participant(saved: list[Label], who: str) -> None:
    with tempfile.TemporaryDirectory() as where:
        _check_withdrawal(Path(where), saved, who)


def _check_withdrawal(root: Path, saved: list[Label], who: str) -> None:
    save_labels(root, saved)
    before = read_labels(root)
    gone = delete_participant(root, who)
    after = read_labels(root)
    assert after == [x for x in before if x.annotator != who]
    assert gone == len(before) - len(after)


def test_a_bad_label_keeps_nothing_of_its_batch(tmp_path: Path) -> None:
    good = Label("r", "e", 0, "a", "norm", "1")
    bad = Label("r", "e", 0, "a", "consensus", "7", topic="rent")
    with pytest.raises(LabelError, match="consensus"):
        save_labels(tmp_path, [good, bad])
    assert read_labels(tmp_path) == []


@pytest.mark.parametrize(
    "label",
    [
        Label("r", "e", 2, "a", "rubric", "3", item="fair"),  # a rubric is episode-wide
        Label("r", "e", EPISODE_WIDE, "a", "norm", "0"),  # a norm flag is per turn
        Label("r", "e", 0, "a", "stance", "A", topic="rent"),  # whose stance?
        Label("r", "e", 0, "a", "mood", "1"),
        Label("r", "e", 0, "", "norm", "1"),
    ],
)
def test_labels_that_do_not_say_what_their_kind_needs(tmp_path: Path, label: Label) -> None:
    with pytest.raises(LabelError):
        save_labels(tmp_path, [label])


def test_labels_live_in_their_own_file(tmp_path: Path) -> None:
    save_labels(tmp_path, [Label("r", "e", 1, "a", "consensus", "4", topic="rent")])
    assert [p.name for p in tmp_path.iterdir()] == [ANNOTATIONS_FILE]
    with sqlite3.connect(tmp_path / ANNOTATIONS_FILE) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"labels"}
    assert read_labels(tmp_path / "elsewhere") == []
    assert delete_participant(tmp_path / "elsewhere", "a") == 0
