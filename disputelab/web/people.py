"""What the people at a hosted table said about it: the questionnaire and its answers,
kept in `STORE/people.sqlite`, a file of its own beside the run store (the store's own
schema stays as it is), keyed by run, episode, participant id and item."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import yaml

from disputelab.errors import DisputelabError

PEOPLE_FILE = "people.sqlite"
SCALE = (1, 2, 3, 4, 5)
SCALE_WORDS = {1: "strongly disagree", 3: "neither", 5: "strongly agree"}


class QuestionnaireError(DisputelabError, ValueError):
    """A questionnaire file that cannot be read, or answers it cannot take."""


@dataclass(frozen=True)
class Item:
    """One Likert statement, answered from 1 (strongly disagree) to 5 (strongly agree)."""

    key: str
    text: str


DEFAULT_ITEMS = (
    Item("satisfaction", "I am satisfied with how the dispute ended."),
    Item("fairness", "The process was fair to me."),
    Item("trust_mediator", "I trusted the mediator."),
)


def read_items(path: Path) -> tuple[Item, ...]:
    """The items of a YAML or JSON file: a list of {key, text}."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise QuestionnaireError(f"{path}: cannot read the questionnaire ({exc})") from None
    items = data.get("items") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise QuestionnaireError(f"{path}: give a list of items, each with a key and a text")
    out: list[Item] = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(k), str) and item[k].strip() for k in ("key", "text")
        ):
            raise QuestionnaireError(f"{path}: item {n} needs a key and a text")
        out.append(Item(item["key"].strip(), item["text"].strip()))
    if len({i.key for i in out}) != len(out):
        raise QuestionnaireError(f"{path}: two items share a key")
    return tuple(out)


def read_answers(items: tuple[Item, ...], form: dict[str, str]) -> dict[str, int]:
    """Each item's answer from a posted form; QuestionnaireError names one left out."""
    out: dict[str, int] = {}
    for item in items:
        raw = form.get(item.key, "")
        if raw not in {str(v) for v in SCALE}:
            raise QuestionnaireError(f"answer every statement from 1 to 5 ({item.text!r})")
        out[item.key] = int(raw)
    return out


def save_answers(
    store: Path, run_id: str, episode_id: str, participant: str, answers: dict[str, int]
) -> None:
    """Keep one person's answers, each in its own row, committed at once."""
    store.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(store / PEOPLE_FILE) as db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS answers (run TEXT, episode TEXT, participant TEXT,"
            " item TEXT, value INTEGER, PRIMARY KEY (run, episode, participant, item))"
        )
        db.executemany(
            "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?)",
            [(run_id, episode_id, participant, k, v) for k, v in answers.items()],
        )
    db.close()


def stored_answers(store: Path, run_id: str) -> list[tuple[str, str, str, int]]:
    """(episode, participant, item, value) of every answer kept for `run_id`."""
    path = store / PEOPLE_FILE
    if not path.exists():
        return []
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT episode, participant, item, value FROM answers WHERE run = ? ORDER BY 1,2,3",
            (run_id,),
        ).fetchall()
    db.close()
    return [(str(a), str(b), str(c), int(d)) for a, b, c, d in rows]


def save_defaults(
    store: Path, run_id: str, episode_id: str, rows: list[tuple[str, str, int, str]]
) -> None:
    """Keep the moves a turn's deadline made for a person, so that an analysis can tell
    them from the moves they made: (participant, seat, party turns done when the move
    was asked, what was asked) each."""
    store.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(store / PEOPLE_FILE) as db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS defaults (run TEXT, episode TEXT, participant TEXT,"
            " seat TEXT, after_party_turns INTEGER, ask TEXT,"
            " PRIMARY KEY (run, episode, seat, after_party_turns, ask))"
        )
        db.executemany(
            "INSERT OR REPLACE INTO defaults VALUES (?, ?, ?, ?, ?, ?)",
            [(run_id, episode_id, *row) for row in rows],
        )
    db.close()


def stored_defaults(store: Path, run_id: str) -> list[tuple[str, str, str, int, str]]:
    """(episode, participant, seat, party turns done when asked, ask) of every move a
    deadline made in `run_id`."""
    path = store / PEOPLE_FILE
    if not path.exists():
        return []
    with sqlite3.connect(path) as db:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'defaults'").fetchone():
            rows = []
        else:
            rows = db.execute(
                "SELECT episode, participant, seat, after_party_turns, ask FROM defaults"
                " WHERE run = ? ORDER BY 1, 4, 3",
                (run_id,),
            ).fetchall()
    db.close()
    return [(str(a), str(b), str(c), int(d), str(e)) for a, b, c, d, e in rows]


def as_json(items: tuple[Item, ...]) -> str:
    return json.dumps([{"key": i.key, "text": i.text} for i in items])


def forget_answers(store: Path, participant: str) -> int:
    """Delete every answer `participant` gave (and the moves a deadline made for them),
    the freed pages zeroed; how many answers."""
    path = store / PEOPLE_FILE
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA secure_delete = ON")
        gone = 0
        for table in ("answers", "defaults"):  # a deadline's moves name the person too
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                sql = f"DELETE FROM {table} WHERE participant = ?"  # the two names above
                deleted = db.execute(sql, (participant,)).rowcount
                gone += deleted if table == "answers" else 0
    db.close()
    return int(gone)
