"""An experiment whose store's disk fills up stops with one clear line saying so, and
once the disk has room, `--resume` finishes it with nothing lost.

The small disk is a tmpfs of 1 MiB, mounted for the test and enlarged in place
(`mount -o remount,size=64m`); that needs root and a machine that lets it mount, so
elsewhere the test is skipped, saying what it needs.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.chaos.store_view import finish, launch, read_store

SPEC = """name: full
scenarios: [tenancy, workplace, boundary-wall]
conditions: [general, posture:competing]
mediators: [rule]
replicates: 16
budget: 40
"""
PLANNED = 3 * 2 * 16 * 2  # about 1.6 MB of store: more than the disk holds


def _mount(*args: str) -> str:
    """Run mount; its complaint, or "" when it worked."""
    try:
        done = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    except OSError as exc:
        return str(exc)
    return "" if done.returncode == 0 else (done.stderr.strip() or f"status {done.returncode}")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    problem = _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk))
    if problem:
        pytest.skip(f"needs root and leave to mount a tmpfs (mount -t tmpfs): {problem}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.slow
def test_a_full_disk_stops_the_run_in_one_line_and_resume_finishes_it(
    small_disk: Path, tmp_path: Path, chaos_summary: Callable[[str], None]
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    store, log = small_disk / "runs", tmp_path / "full.log"
    status = finish(launch(store, spec, log), log)
    out = log.read_text()
    at_full = read_store(store, "full")
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert status == 2 and "Traceback" not in out, out[-3000:]
    assert len(errors) == 1 and "disk" in errors[0] and "full" in errors[0], out[-3000:]
    assert 0 < len(at_full.complete) < PLANNED, "the disk did not fill mid-run"

    assert _mount("-o", "remount,size=64m", str(small_disk)) == ""
    resumed_log, clean_log = tmp_path / "resume.log", tmp_path / "clean.log"
    assert finish(launch(store, spec, resumed_log, "--resume"), resumed_log) == 0
    clean = tmp_path / "clean"
    assert finish(launch(clean, spec, clean_log), clean_log) == 0
    final, want = read_store(store, "full"), read_store(clean, "full")
    chaos_summary(
        f"{len(at_full.complete)} of {PLANNED} episodes stored when the 1 MiB disk filled; "
        f"after enlarging it, --resume ran {PLANNED - len(at_full.complete)}: "
        f"{len(set(want.status) - final.complete)} missing, "
        f"{len(final.stored_twice)} stored twice, {final.duplicate_turns} duplicate turns"
    )
    assert f"{len(at_full.complete)} already done, 0 failed" in " ".join(
        resumed_log.read_text().split()
    )
    assert final.status == want.status and final.complete == set(want.status)
    assert not final.stored_twice and final.duplicate_turns == 0 and not final.bad_turns
    assert final.turns == want.turns
    print(errors[0])  # shown with -rA or -s: what the user read
