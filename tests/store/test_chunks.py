"""Turns as store schema 8 writes them: each commit's turns in one record (a chunk) that
reads back exactly as played, holds each distinct value once, names nothing outside
itself, and when damaged costs its episode alone, in one line."""

from __future__ import annotations

import json
import math
import sqlite3
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from disputelab.episode import (
    Action,
    Episode,
    Intervention,
    Outcome,
    Stance,
    Status,
    Thought,
    Turn,
    TurnChoice,
    Usage,
    Verdict,
)
from disputelab.scenario.io import scenario_to_data
from disputelab.store import rows
from disputelab.store.chunks import decode_turns, encode_turns, unpack
from disputelab.store.sqlite import Store
from tests.helpers import play, scenario, stored_turns
from tests.store.test_damage import assert_one_error_line, cli


def every_field() -> list[Turn]:
    """Turns that use every field a turn, a move and an intervention have, with numbers
    that compare equal but encode differently (0.0 and -0.0; 1 and 1.0 where a field
    keeps its type)."""
    stances = {"rent": Stance("A", ("A", "B")), "repairs": Stance(None, ())}
    offer = Action(
        "I can pay 1,200.",
        stances,
        thought="worth 0.8",
        verdict=Verdict("accept", "satisfied", "fair"),
        offer={"price": 1200.0},
        clauses=("paid in 30 days",),
    )
    choice = TurnChoice(
        "tenant",
        "self-selected",
        4.0,
        "t1",
        {"tenant": [Thought("t1", "tenant", "say it", 4.0, 3.0, "why", ("CON#0",))]},
        {"tenant": 4.0},
        2,
    )
    proposal = Intervention(
        "How about B?", {"rent": "B"}, "stall", "points", ("s. 11",), {"price": 1.0}
    )
    return [
        Turn(0, 0, "mediator", "mediator", "How about B?", intervention=proposal),
        Turn(1, 1, "tenant", "party", "I can pay 1,200.", action=offer, consensus={"rent": 0.0}),
        Turn(2, 2, "landlord", "party", "I can pay 1,200.", action=offer, consensus={"rent": -0.0}),
        Turn(
            3,
            3,
            "tenant",
            "party",
            "Said aloud.",
            action=Action("Thought over.", stances, offer={"price": -0.0}),
            consensus={"rent": 1.0, "repairs": 0.5},
            latency_s=0.25,
            usage=Usage(1, 10, 5, None),
            stage="closure",
            delivered={"landlord": "Paraphrased."},
            choice=choice,
        ),
        Turn(4, 4, "landlord", "party", "", action=Action("", {}, offer={"price": 0.0})),
        Turn(5, 5, "tenant", "party", "", usage=Usage(1, 10, 5, 1)),
        Turn(6, 6, "tenant", "party", "", usage=Usage(1, 10, 5, 1.0)),
    ]


def same(a: list[Turn], b: list[Turn]) -> bool:
    """Equal, and every number of the same type and sign (Turn equality takes 1 == 1.0)."""
    return a == b and json.dumps([t.to_dict() for t in a]) == json.dumps([t.to_dict() for t in b])


def write(store: Store, eid: str, groups: list[list[Turn]], run_id: str) -> None:
    """A finished episode whose turns are committed in `groups`, as the runner would."""
    s = scenario("tenancy")
    ep = Episode(s.id, "roundtable", 0, {"parties": "rule"})
    store.start_episode(eid, run_id, ep, scenario_to_data(s))
    for group in groups:
        store.append_turns(eid, group)
    ep.outcome = Outcome(Status.RESOLVED, "deal", {"rent": "B"}, {"price": 1200.0})
    store.finish_episode(eid, ep)


def _body(data: bytes) -> tuple[int, list[str], list[list[object]]]:
    """A chunk's layout version, values and rows."""
    values, rows = unpack(data)
    return 1, values, rows


def _played_after(turns: list[Turn]) -> list[Turn]:
    played = play(scenario("workplace"), mediator="rule", seed=3, budget=30).turns
    return [Turn.from_dict({**t.to_dict(), "index": t.index + len(turns)}) for t in played]


def test_an_episode_round_trips_exactly_in_one_chunk_or_several(tmp_path: Path) -> None:
    ours = every_field()
    turns = [*ours, *_played_after(ours)]
    store = Store(tmp_path)
    run_id = store.create_run("run")
    write(store, "whole", [turns], run_id)
    write(store, "split", [turns[:1], turns[1:2], turns[2:5], turns[5:]], run_id)
    chunks = store.db.execute(
        "SELECT episode_id, first_idx, count FROM turn_chunks ORDER BY episode_id, first_idx"
    ).fetchall()
    n = len(turns)
    assert chunks == [
        ("split", 0, 1),
        ("split", 1, 1),
        ("split", 2, 3),
        ("split", 5, n - 5),
        ("whole", 0, n),
    ]
    for reader in (store, Store(tmp_path)):  # with this process's memos, and without
        for eid in ("whole", "split"):
            record = reader.load_episode(eid)
            assert same(record.episode.turns, turns), eid
            assert record.scenario == scenario_to_data(scenario("tenancy"))
            assert record.episode.outcome == Outcome(
                Status.RESOLVED, "deal", {"rent": "B"}, {"price": 1200.0}
            )


def test_numbers_that_compare_equal_keep_their_own_encoding() -> None:
    turns = decode_turns(encode_turns(every_field()))
    assert [t.consensus for t in turns[1:3]] == [{"rent": 0.0}, {"rent": -0.0}]
    assert math.copysign(1, turns[2].consensus["rent"]) == -1  # type: ignore[index]
    offers = [t.action.offer["price"] for t in turns[3:] if t.action]
    assert [math.copysign(1, x) for x in offers] == [-1, 1]
    assert [t.usage.cost_usd for t in turns[5:] if t.usage] == [1, 1.0]
    assert [type(t.usage.cost_usd) for t in turns[5:] if t.usage] == [int, float]


def test_turns_that_share_a_move_read_back_with_their_own_stances_and_offer() -> None:
    # The reader builds a repeated move once; every turn must still get its own copy.
    turns = decode_turns(encode_turns(every_field()))
    first, second = turns[1].action, turns[2].action
    assert first is not None and second is not None
    assert first == second and first is not second
    first.stances["rent"] = Stance("B")
    first.offer["price"] = 1.0
    assert second.stances["rent"] == Stance("A", ("A", "B"))
    assert second.offer == {"price": 1200.0}
    again = decode_turns(encode_turns(every_field()))[1].action
    assert again is not None and again.stances["rent"] == Stance("A", ("A", "B"))


def test_moves_that_differ_only_in_their_strategy_read_back_their_own() -> None:
    stances = {"rent": Stance("A", ("A",))}
    strategies = [(3.0, 7.0), (3.0, 7.5), None, (3.0, 7.0)]
    turns = [
        Turn(
            i,
            i,
            "tenant",
            "party",
            "Same words.",
            action=Action("Same words.", stances, strategy=s),
        )
        for i, s in enumerate(strategies)
    ]
    back = decode_turns(encode_turns(turns))
    assert [t.action.strategy for t in back if t.action] == strategies


def test_the_writers_memo_of_moves_knows_every_field_of_an_action() -> None:
    # Its fast key lists the fields by hand: a field added to Action and not to the key
    # would quietly send every move through the slow one.
    assert rows._ACTION_KNOWN


def test_a_chunk_holds_each_distinct_value_once() -> None:
    """Utterances, speakers, the repeating part of moves and consensus vectors that
    repeat within a commit are held once and named by position; a party's move never
    holds the utterance its turn's text already does."""
    played = play(scenario("workplace"), mediator="rule", seed=1, budget=60).turns
    _, values, rows = _body(encode_turns(played))
    assert isinstance(values, list) and isinstance(rows, list)
    assert len(values) == len(set(values))
    said = [t.text for t in played]
    assert len(said) > len(set(said))  # the rule templates do repeat within an episode...
    assert {values[r[4]] for r in rows} == set(said)  # ...and each is held once
    for turn, row in zip(played, rows, strict=True):
        if turn.action is not None and turn.action.utterance == turn.text:
            assert turn.text not in values[row[5]] and turn.text not in json.dumps(row[6])


def test_turns_sharing_one_consensus_read_back_their_own() -> None:
    shared = {"rent": 0.5, "repairs": 1.0}
    alike = dict(shared)  # equal, but not the same object
    moved = {"rent": 1.0, "repairs": 1.0}
    vectors = [shared, shared, shared, alike, moved, shared]
    turns = [Turn(i, i, "a", "party", f"turn {i}", consensus=c) for i, c in enumerate(vectors)]
    _, _, rows = _body(encode_turns(turns))
    assert isinstance(rows, list) and len({r[9] for r in rows}) == 2
    decoded = decode_turns(encode_turns(turns))
    assert [t.consensus for t in decoded] == vectors
    decoded[0].consensus["rent"] = 0.0  # type: ignore[index]
    assert decoded[1].consensus == shared  # each turn reads back a vector of its own


def test_a_commit_is_one_record_and_a_run_stores_no_turn_strings(tmp_path: Path) -> None:
    root = tmp_path / "store"
    assert cli(root, "run", "workplace", "--mediator", "rule", "--budget", "30").exit_code == 0
    db = sqlite3.connect(root / "disputelab.sqlite")
    per_episode = db.execute("SELECT episode_id, COUNT(*) FROM turn_chunks GROUP BY 1").fetchall()
    assert len(per_episode) == 2 and all(n == 1 for _, n in per_episode)  # under a second each
    assert db.execute("SELECT COUNT(*) FROM turns").fetchone() == (0,)
    # The table of strings holds the scenario the two episodes share, nothing of the turns.
    assert db.execute("SELECT COUNT(*) FROM strings").fetchone() == (1,)
    for eid, _ in per_episode:
        assert [i for _, i in stored_turns(db, eid)] == list(range(len(stored_turns(db, eid))))


# Any text SQLite takes: every code point but the surrogates, quotes and controls included.
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(thought=_TEXT, utterance=_TEXT, said_aloud=st.booleans(), speaker=_TEXT)
def test_a_party_moves_own_text_reads_back_exactly_whatever_it_holds(
    thought: str, utterance: str, said_aloud: bool, speaker: str
) -> None:
    move = Action(utterance, {"rent": Stance("A", ("A",))}, thought=thought)
    text = utterance if said_aloud else utterance + " (aloud)"
    turn = Turn(0, 0, speaker, "party", text, action=move)
    turns = [turn, Turn.from_dict({**turn.to_dict(), "index": 1})]
    assert same(decode_turns(encode_turns(turns)), turns)
    _, _, rows = _body(encode_turns(turns))
    assert isinstance(rows, list)
    assert (rows[0][6] or {}) == {
        **({"thought": thought} if thought else {}),
        **({} if said_aloud else {"utterance": utterance}),
    }


@pytest.mark.parametrize(
    "damage",
    [
        b"DLT1" + b"\x78\x01" + b"\xff" * 40,  # does not decompress
        b"DLT9" + zlib.compress(b"[9, [], []]"),  # a layout this version does not know
        b"DLT1" + zlib.compress(b"\x00\x00\x00\x11[1, [], [[0, 1]]]"),  # a turn lacks fields
        b"DLT1" + zlib.compress(b'\x00\x00\x00\x0d{"turns": []}'),  # not a chunk at all
        b"DLT1" + zlib.compress(b"\x00\x00\x00\x0c[1, [5], []]abc"),  # values cut short
        "text, not bytes",
    ],
)
def test_a_record_that_does_not_decode_is_an_error(damage: object) -> None:
    with pytest.raises((ValueError, TypeError, KeyError, IndexError)):
        decode_turns(damage)  # type: ignore[arg-type]


def _two_runs(root: Path) -> list[str]:
    for seed in ("0", "1"):
        result = cli(root, "run", "tenancy", "--mediator", "rule", "--seed", seed, "--budget", "20")
        assert result.exit_code == 0, result.output
    runs = json.loads(cli(root, "runs", "--format", "json").stdout)
    return [r["run"] for r in runs]


def test_a_chunk_whose_bytes_are_damaged_costs_its_episode_alone_in_one_line(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    first, last = _two_runs(root)
    db = sqlite3.connect(root / "disputelab.sqlite")
    # One byte inside the compressed record of the last run's mediated episode flips:
    # zlib's checksum notices, whatever byte it is.
    (rowid, data) = db.execute(
        "SELECT rowid, data FROM turn_chunks WHERE episode_id = ?", (f"{last}-rule",)
    ).fetchone()
    middle = len(data) // 2
    flipped = data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1 :]
    db.execute("UPDATE turn_chunks SET data = ? WHERE rowid = ?", (flipped, rowid))
    db.commit()
    db.close()
    assert_one_error_line(cli(root, "report", last), "is damaged", "store recover")
    assert cli(root, "report", first).exit_code == 0
    check = cli(root, "store", "check")
    assert check.exit_code == 1 and "rows that do not read: turn_chunks 1" in check.stdout
    out = tmp_path / "rescued"
    result = cli(root, "store", "recover", str(out))
    assert result.exit_code == 1, result.output
    assert f"run {first} (run): 2 of 2 episodes copied" in result.stdout
    assert f"run {last} (run): 1 of 2 episodes copied" in result.stdout
    assert "are unreadable (a lost chunk of turns)" in result.stdout
    assert cli(out, "store", "check").exit_code == 0


def test_a_chunk_that_holds_other_turns_than_its_row_names_is_damage(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _, last = _two_runs(root)
    db = sqlite3.connect(root / "disputelab.sqlite")
    db.execute("UPDATE turn_chunks SET count = count - 1 WHERE episode_id = ?", (f"{last}-rule",))
    db.commit()
    db.close()
    check = cli(root, "store", "check")
    assert check.exit_code == 1 and "rows that do not read: turn_chunks 1" in check.stdout


def test_a_turn_is_stored_once_however_the_commits_are_cut(tmp_path: Path) -> None:
    """A writer whose lease lapsed may commit turns that another process has stored since
    (with other commit boundaries): refused, as a second row for a turn was."""
    store = Store(tmp_path)
    turns = [Turn(i, i, "a", "party", f"turn {i}") for i in range(8)]
    s = scenario("tenancy")
    store.start_episode("e", store.create_run("run"), Episode(s.id, "roundtable", 0, {}), {})
    store.append_turns("e", turns[0:5])
    with pytest.raises(sqlite3.IntegrityError, match="turns 3 to 7 of episode e"):
        store.append_turns("e", turns[3:8])
    store.append_turns("e", turns[5:8])
    assert [t.index for t in store.load_episode("e").episode.turns] == list(range(8))


def test_chunks_that_hold_one_turn_twice_are_damage(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _, last = _two_runs(root)
    db = sqlite3.connect(root / "disputelab.sqlite")
    (data, count) = db.execute(
        "SELECT data, count FROM turn_chunks WHERE episode_id = ?", (f"{last}-rule",)
    ).fetchone()
    again = encode_turns(decode_turns(data)[-2:])  # its last two turns, in a chunk of their own
    db.execute("INSERT INTO turn_chunks VALUES (?, ?, 2, ?)", (f"{last}-rule", count - 2, again))
    db.commit()
    db.close()
    check = cli(root, "store", "check")
    assert check.exit_code == 1
    assert "two chunks of its turns hold the same turn" in check.stdout


def test_a_chunk_that_names_a_value_it_lacks_fails_report_in_one_line(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _, last = _two_runs(root)
    db = sqlite3.connect(root / "disputelab.sqlite")
    (data,) = db.execute(
        "SELECT data FROM turn_chunks WHERE episode_id = ?", (f"{last}-rule",)
    ).fetchone()
    values, rows = unpack(data)
    header = json.dumps([1, [len(v) for v in values], [[*rows[0][:4], len(values), *rows[0][5:]]]])
    body = header.encode()
    bad = b"DLT1" + zlib.compress(len(body).to_bytes(4, "big") + body + "".join(values).encode())
    db.execute(
        "UPDATE turn_chunks SET data = ?, count = 1 WHERE episode_id = ?", (bad, f"{last}-rule")
    )
    db.commit()
    db.close()
    assert_one_error_line(cli(root, "report", last), "is damaged", "store recover")
    check = cli(root, "store", "check")
    assert check.exit_code == 1 and "rows that do not read: turn_chunks 1" in check.stdout


def test_a_store_that_lost_its_table_of_turns_is_damaged_not_empty(tmp_path: Path) -> None:
    """A store of schema 8 without `turn_chunks` has lost its turns: no command takes it
    for a store of no turns (nor makes a new, empty table in its place)."""
    root = tmp_path / "store"
    _two_runs(root)
    with sqlite3.connect(root / "disputelab.sqlite") as db:
        db.execute("DROP TABLE turn_chunks")
    for args in (("runs",), ("report", "last"), ("run", "tenancy")):
        assert_one_error_line(cli(root, *args), "turn_chunks) is gone", "store recover")
    with sqlite3.connect(root / "disputelab.sqlite") as db:
        assert not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'turn_chunks'").fetchone()
    check = cli(root, "store", "check")
    assert check.exit_code == 1 and "its table of turns (turn_chunks) is gone" in check.stdout
    out = tmp_path / "rescued"
    result = cli(root, "store", "recover", str(out))
    assert result.exit_code == 1
    assert result.stdout.count("its turns are gone with the table that held them") == 4
