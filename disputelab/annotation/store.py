"""People's labels of stored runs, kept in `STORE/annotations.sqlite`: a file of its own
beside the run store (whose schema stays as it is), one row per label.

A label is tidy: one annotator's one value for one thing about one turn of one episode
of one run. Its `kind` says what the thing is:

- `stance`: a party's stance on a topic after the turn (`party`, `topic`; the value is
  one of the topic's option ids, or `none` while the party has backed no option);
- `consensus`: how close the parties are on a topic after the turn (`topic`; 1 far
  apart .. 5 agreed, the five levels of a SoCRATES judge's rubric);
- `rubric`: a Likert rating 1-5 of the mediator over the whole episode (`item`;
  `turn` is EPISODE_WIDE);
- `norm`: whether the turn breaks a norm of the table (value `1`) or not (`0`).

Saving a label again (the same run, episode, turn, annotator, kind, party, topic and
item) replaces its value, so an annotator who goes back and changes an answer leaves
one row. Annotators are known only by a pseudonymous id; `delete_participant` removes
every row of one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from disputelab.errors import DisputelabError

__all__ = [
    "ANNOTATIONS_FILE",
    "EPISODE_WIDE",
    "KINDS",
    "NO_STANCE",
    "Label",
    "LabelError",
    "delete_participant",
    "read_labels",
    "save_labels",
]

ANNOTATIONS_FILE = "annotations.sqlite"
KINDS = ("stance", "consensus", "rubric", "norm")
EPISODE_WIDE = -1  # the turn of a label about the whole episode (a rubric rating)
NO_STANCE = "none"
_LIKERT = {"1", "2", "3", "4", "5"}
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS labels (run TEXT NOT NULL, episode TEXT NOT NULL,"
    " turn INTEGER NOT NULL, annotator TEXT NOT NULL, kind TEXT NOT NULL,"
    " party TEXT NOT NULL, topic TEXT NOT NULL, item TEXT NOT NULL, value TEXT NOT NULL,"
    " PRIMARY KEY (run, episode, turn, annotator, kind, party, topic, item))"
)
_COLUMNS = "run, episode, turn, annotator, kind, party, topic, item, value"


class LabelError(DisputelabError, ValueError):
    """A label that does not say what its kind needs."""


@dataclass(frozen=True, order=True)
class Label:
    """One annotator's one value; `party`, `topic` and `item` are "" where the kind has
    none of them."""

    run: str
    episode: str
    turn: int
    annotator: str
    kind: str
    value: str
    party: str = ""
    topic: str = ""
    item: str = ""

    def problem(self) -> str:
        """Why the label cannot be kept ("" when it can)."""
        if not (self.run and self.episode and self.annotator):
            return "a label needs its run, episode and annotator"
        if self.kind not in KINDS:
            return f"unknown label kind {self.kind!r}; one of {', '.join(KINDS)}"
        needs = {
            "stance": bool(self.party and self.topic and self.value),
            "consensus": bool(self.topic) and self.value in _LIKERT,
            "rubric": bool(self.item) and self.value in _LIKERT,
            "norm": self.value in {"0", "1"},
        }
        if not needs[self.kind]:
            return f"a {self.kind} label is missing what it is about, or its value is off"
        wide = self.kind == "rubric"
        if wide != (self.turn == EPISODE_WIDE) or self.turn < EPISODE_WIDE:
            return f"a {self.kind} label has turn {self.turn}"
        return ""


def _path(store_root: str | Path) -> Path:
    return Path(store_root) / ANNOTATIONS_FILE


def save_labels(store_root: str | Path, labels: Iterable[Label]) -> int:
    """Keep `labels` in one transaction (all or none), replacing earlier values of the
    same labels; how many were kept. LabelError names the first that cannot be kept."""
    rows = list(labels)
    for label in rows:
        why = label.problem()
        if why:
            raise LabelError(why)
    root = Path(store_root)
    root.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(_path(root))) as db, db:
        db.execute(_SCHEMA)
        db.executemany(
            f"INSERT OR REPLACE INTO labels ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (x.run, x.episode, x.turn, x.annotator, x.kind, x.party, x.topic, x.item, x.value)
                for x in rows
            ],
        )
    return len(rows)


def read_labels(
    store_root: str | Path, run: str | None = None, kinds: Sequence[str] = KINDS
) -> list[Label]:
    """Every label kept (of `run` only, when given; of `kinds` only), sorted."""
    path = _path(store_root)
    if not path.exists():
        return []
    marks = ", ".join("?" for _ in kinds)
    query = f"SELECT {_COLUMNS} FROM labels WHERE kind IN ({marks})"
    args: list[object] = list(kinds)
    if run is not None:
        query += " AND run = ?"
        args.append(run)
    with closing(sqlite3.connect(path)) as db:
        db.execute(_SCHEMA)
        found = db.execute(query, args).fetchall()
    return sorted(
        Label(str(r), str(e), int(t), str(a), str(k), str(v), str(p), str(tp), str(i))
        for r, e, t, a, k, p, tp, i, v in found
    )


def delete_participant(store_root: str | Path, participant_id: str) -> int:
    """Remove every label of one annotator (their wish to withdraw); how many went."""
    path = _path(store_root)
    if not path.exists():
        return 0
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("PRAGMA secure_delete = ON")  # the freed pages are zeroed, not left
        db.execute(_SCHEMA)
        gone = db.execute("DELETE FROM labels WHERE annotator = ?", (participant_id,))
        return int(gone.rowcount)
