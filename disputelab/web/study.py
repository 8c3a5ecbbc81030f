"""A hosted study's assignment: which participant takes which scenario and seat, drawn
balanced, and kept in `STORE/people.sqlite` beside the questionnaire answers.

Assignment is by permuted blocks, as in a randomised trial: the scenarios in a fresh
random order for every M participants, and within each scenario its seats the same
way, so that no scenario (and no seat of one) is given more than once more than
another, whatever the number of participants, and the order cannot be guessed from the
position. The draw is seeded; the whole assignment is recorded before anyone joins,
and each row gets its episode once that ends.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from disputelab.web.people import PEOPLE_FILE


@dataclass(frozen=True)
class Slot:
    """One participant's place in the study: the `position`-th link (from 1), its
    scenario and seat, and the seed its episode is played with."""

    position: int
    scenario: str
    seat: str
    seed: int


def _blocks(items: Sequence[str], rng: random.Random) -> list[str]:
    block = list(items)
    rng.shuffle(block)
    return block


def balanced_slots(
    seats_by_scenario: Mapping[str, Sequence[str]], participants: int, seed: int = 0
) -> list[Slot]:
    """`participants` slots over the scenarios (in their given order as keys) and their
    seats, by permuted blocks; each episode's seed is `seed` plus its position, so no two
    participants replay one draw."""
    if participants < 1 or not seats_by_scenario or not all(seats_by_scenario.values()):
        raise ValueError("a study needs participants, and scenarios each with a seat")
    rng = random.Random(seed)
    order: list[str] = []
    while len(order) < participants:
        order += _blocks(list(seats_by_scenario), rng)
    queues: dict[str, list[str]] = {s: [] for s in seats_by_scenario}
    slots = []
    for position, scenario in enumerate(order[:participants], 1):
        if not queues[scenario]:
            queues[scenario] = _blocks(seats_by_scenario[scenario], rng)
        slots.append(Slot(position, scenario, queues[scenario].pop(0), seed + position))
    return slots


_TABLE = (
    "CREATE TABLE IF NOT EXISTS assignments (study TEXT, position INTEGER, participant TEXT,"
    " scenario TEXT, seat TEXT, seed INTEGER, run TEXT, episode TEXT, stop TEXT,"
    " PRIMARY KEY (study, position))"
)


def record_assignments(store: Path, study: str, rows: Sequence[tuple[Slot, str]]) -> None:
    """Keep the study's whole assignment, each slot with its participant id, at once;
    a study of that name already recorded is replaced (a study restarted anew)."""
    store.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(store / PEOPLE_FILE) as db:
        db.execute(_TABLE)
        db.execute("DELETE FROM assignments WHERE study = ?", (study,))
        db.executemany(
            "INSERT INTO assignments VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL)",
            [(study, s.position, who, s.scenario, s.seat, s.seed) for s, who in rows],
        )
    db.close()


def record_ended(
    store: Path, study: str, participant: str, run: str, episode: str, stop: str
) -> None:
    """Name the episode a participant's slot was played in, once it has ended."""
    with sqlite3.connect(store / PEOPLE_FILE) as db:
        db.execute(
            "UPDATE assignments SET run = ?, episode = ?, stop = ? WHERE study = ? AND"
            " participant = ?",
            (run, episode, stop, study, participant),
        )
    db.close()


@dataclass(frozen=True)
class Assignment:
    """One recorded row: a slot, who took it, and the episode it became (if it ended)."""

    slot: Slot
    participant: str
    run: str | None
    episode: str | None
    stop: str | None


def stored_assignments(store: Path, study: str) -> list[Assignment]:
    """The study's recorded assignment, in position order ([] when none is)."""
    path = store / PEOPLE_FILE
    if not path.exists():
        return []
    with sqlite3.connect(path) as db:
        db.execute(_TABLE)
        rows = db.execute(
            "SELECT position, scenario, seat, seed, participant, run, episode, stop"
            " FROM assignments WHERE study = ? ORDER BY position",
            (study,),
        ).fetchall()
    db.close()
    return [Assignment(Slot(p, sc, se, sd), who, r, e, st) for p, sc, se, sd, who, r, e, st in rows]


def forget_assignments(store: Path, participant: str) -> int:
    """Delete the assignment rows of `participant`, the freed pages zeroed; how many."""
    path = store / PEOPLE_FILE
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA secure_delete = ON")
        db.execute(_TABLE)
        gone = db.execute("DELETE FROM assignments WHERE participant = ?", (participant,))
    db.close()
    return int(gone.rowcount)
