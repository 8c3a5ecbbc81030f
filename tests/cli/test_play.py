"""`disputelab play` at a real terminal (a pseudo-terminal driven by pexpect): a person
plays a tenancy party against rule agents to a stop, pressing Enter for the defaults
shown; bad input is asked again with its reason; Ctrl-C leaves a stored episode that
`play --resume` continues from the turn it stopped at; `report` reads the result."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect", reason="pexpect (the dev extra) drives the terminal")

ROOT = Path(__file__).resolve().parents[2]
# A choice's prompt: `LABEL [DEFAULT]: ` at the start of a line.
ASK = re.compile(r"\n([^\n\[]+?) \[([^\]\n]*)\]: ")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _spawn(store: Path, *args: str) -> pexpect.spawn:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "NO_COLOR": "1"}
    command = [sys.executable, "-m", "disputelab", "--store", str(store), *args]
    return pexpect.spawn(command[0], command[1:], env=env, encoding="utf-8", timeout=120)


def _enter_to_the_end(child: pexpect.spawn) -> tuple[int, str]:
    """Press Enter at every choice until the episode ends: how many were asked, and
    what the terminal showed meanwhile (colours taken out)."""
    asked, shown = 0, []
    while child.expect([ASK, "stored as run"]) == 0:
        shown.append(child.before + child.after)
        child.sendline("")
        asked += 1
    shown.append(child.before + child.after)
    child.expect(pexpect.EOF)
    shown.append(child.before)
    return asked, ANSI.sub("", "".join(shown))


def _run_id(text: str) -> str:
    found = re.search(r"play --resume (\S+)", ANSI.sub("", text))
    assert found is not None, text
    return found.group(1)


def test_a_person_plays_a_tenancy_party_against_rule_agents_to_a_stop(tmp_path: Path) -> None:
    child = _spawn(
        tmp_path,
        "play",
        "tenancy",
        "--seat",
        "parties:tenant",
        "--mediator",
        "rule",
        "--budget",
        "6",
    )
    child.expect("You are Mira Okafor, tenant")
    child.expect(ASK)
    assert child.match.group(1).strip() == "Mould treatment and repairs"
    child.sendline("Z")  # not an option: refused with its reason, and asked again
    child.expect(r"! Mould treatment and repairs: 'Z' is not an option; choose from A, B, C, D")
    child.expect(ASK)
    child.sendline("?")
    child.expect("Enter alone takes: A")
    child.expect(ASK)
    child.sendline("b,a")
    while child.expect(ASK) == 0 and child.match.group(1).strip() != "say":
        child.sendline("")
    child.sendline("Fix the damp properly and we can talk about the rent.")
    asked, out = _enter_to_the_end(child)
    child.close()
    assert child.exitstatus == 0, out
    assert asked >= 2 * 6  # two more turns of four stances, a signal and words
    assert "stop: budget: turn budget of 6 party turns ran out" in out
    from disputelab.api import open_store, report

    (run,) = open_store(tmp_path).runs()
    text = report(run["run_id"], store=tmp_path)
    assert "**party turn 1 · Mira Okafor:** Fix the damp properly" in text
    assert "- people: parties:tenant (p-" in text


def test_ctrl_c_mid_game_leaves_an_episode_that_resume_finishes(tmp_path: Path) -> None:
    child = _spawn(tmp_path, "play", "tenancy", "--seat", "tenant", "--budget", "6")
    while child.expect(ASK) == 0 and child.match.group(1).strip() != "say":
        child.sendline("")
    child.sendline("My first words.")
    child.expect(ASK)  # the second turn's first choice
    child.sendcontrol("c")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "stopped; your finished turns are stored" in ANSI.sub("", child.before)
    run_id = _run_id(child.before)

    from disputelab.api import open_store

    store = open_store(tmp_path)
    (eid,) = store.episode_ids(run_id)
    assert not store.load_episode(eid).complete
    store.close()

    child = _spawn(tmp_path, "play", "--resume", run_id)
    _, out = _enter_to_the_end(child)
    child.close()
    assert child.exitstatus == 0
    assert "resumed: 1 of your moves replayed from the log" in out
    store = open_store(tmp_path)
    record = store.load_episode(eid)
    assert record.complete
    assert record.episode.turns[0].text == "My first words."
    assert record.episode.party_turns == 6


def test_play_without_a_seat_is_one_line_and_status_2(tmp_path: Path) -> None:
    child = _spawn(tmp_path, "play", "tenancy")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert "error: name a scenario and --seat, or --resume RUN" in ANSI.sub("", child.before)
