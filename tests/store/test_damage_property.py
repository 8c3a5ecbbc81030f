"""Any one damaged byte, or a file cut short anywhere, ends `runs`, `store check` and
`store recover` in the answer each promises, never a traceback or a hang (issue 46,
item 5); and something other than a file where the store's database belongs is refused
at once by every command that opens a store.

The store is made once, by the command line, and each example damages a copy of it: a
byte flipped or set to 0xFF at a random offset (half of them in the first page, which
holds the file's header and its list of tables), or the file truncated at a random
offset. Every command runs as a user runs it, in a process of its own, under a timeout
that only a hang reaches.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from disputelab.store.integrity import check
from disputelab.store.sqlite import DB_NAME

TIMEOUT_S = 120  # a watchdog against hangs, not a speed check
EXAMPLES = 30
FIRST_PAGE = 4096
SPEC = "name: small\nscenarios: [tenancy]\nreplicates: 1\nbudget: 10\n"


@dataclass(frozen=True)
class Answer:
    code: int
    stdout: str
    stderr: str


def disputelab(store: Path, *args: str, cwd: Path | None = None) -> Answer:
    """The console command, in a process of its own, with its exit status and output."""
    proc = subprocess.run(
        [sys.executable, "-m", "disputelab", "--store", str(store), *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
    )
    return Answer(proc.returncode, proc.stdout, proc.stderr)


def assert_one_error_line(answer: Answer, *fragments: str) -> None:
    assert answer.code == 2, answer
    assert "Traceback" not in answer.stdout + answer.stderr, answer.stderr
    lines = answer.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), answer.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A store of an experiment and a single run, all of it in the main file."""
    root = tmp_path_factory.mktemp("pristine")
    (root / "small.yaml").write_text(SPEC)
    store = root / "store"
    for args in (("experiment", "small.yaml"), ("run", "workplace", "--mediator", "rule")):
        answer = disputelab(store, *args, cwd=root)
        assert answer.code == 0, answer
    db = sqlite3.connect(store / DB_NAME)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    yield store


@dataclass(frozen=True)
class Damage:
    kind: str  # "flip", "0xff" or "truncate"
    offset: int
    xor: int = 0xFF

    def apply(self, data: bytes) -> bytes:
        at = self.offset % len(data)
        if self.kind == "truncate":
            return data[:at]
        out = bytearray(data)
        out[at] = 0xFF if self.kind == "0xff" else out[at] ^ self.xor
        return bytes(out)


offsets = st.one_of(st.integers(0, FIRST_PAGE - 1), st.integers(0, 2**31))
damages = st.one_of(
    st.builds(Damage, st.just("flip"), offsets, st.integers(1, 255)),
    st.builds(Damage, st.just("0xff"), offsets),
    st.builds(Damage, st.just("truncate"), offsets),
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(damage=damages)
def test_any_one_damaged_byte_ends_runs_check_and_recover_in_their_answer(
    pristine: Path, damage: Damage
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store, out = Path(folder) / "store", Path(folder) / "rescued"
        store.mkdir()
        (store / DB_NAME).write_bytes(damage.apply((pristine / DB_NAME).read_bytes()))
        runs = disputelab(store, "runs")
        checked = disputelab(store, "store", "check")
        recovered = disputelab(store, "store", "recover", str(out))
        for answer in (runs, checked, recovered):
            assert "Traceback" not in answer.stdout + answer.stderr, (damage, answer)
            if answer.code == 2:
                assert_one_error_line(answer)
            else:
                assert not answer.stderr, (damage, answer)
        assert runs.code in (0, 2), (damage, runs)
        # `store check`: 0 healthy, 1 damaged (then what reads, run by run), 2 no store.
        assert checked.code in (0, 1, 2), (damage, checked)
        if checked.code in (0, 1):
            healthy = "healthy" if checked.code == 0 else "not healthy"
            assert checked.stdout.startswith(f"store {store} is {healthy}:"), (damage, checked)
        if checked.code == 0:  # nothing a command meets is damage the check missed
            assert runs.code == 0, (damage, runs)
        # `store recover`: 0 all copied, 1 some lost (and said which), 2 nothing to copy.
        assert recovered.code in (0, 1, 2), (damage, recovered)
        if recovered.code in (0, 1):
            assert recovered.stdout.startswith(f"recovered into {out}: "), (damage, recovered)
            assert check(out).healthy, (damage, recovered)


# ---- something other than a file where the store's database belongs ------------------


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _device(path: Path) -> None:
    path.symlink_to("/dev/zero")


NOT_FILES = {"a named pipe": _fifo, "a directory": _directory, "a device": _device}
SAID = {"a named pipe": "named pipe", "a directory": "a directory", "a device": "device"}
COMMANDS = (
    ("runs",),
    ("report", "last"),
    ("store", "check"),
    ("store", "recover", "{tmp}/rescued"),
    ("experiment", "{tmp}/small.yaml", "--resume"),
    ("view", "--port", "0"),
)


@pytest.mark.parametrize("kind", sorted(NOT_FILES))
def test_something_not_a_file_where_the_database_belongs_is_refused_at_once(
    kind: str, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    NOT_FILES[kind](store / DB_NAME)
    (tmp_path / "small.yaml").write_text(SPEC)
    for command in COMMANDS:
        args = [a.replace("{tmp}", str(tmp_path)) for a in command]
        assert_one_error_line(disputelab(store, *args, cwd=tmp_path), SAID[kind], DB_NAME)
    assert not (tmp_path / "rescued").exists()
    assert {p.name for p in store.iterdir()} == {DB_NAME}  # nothing made beside it


def test_a_store_folder_that_is_a_named_pipe_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "store")
    for command in (("runs",), ("report", "last"), ("run", "tenancy", "--mediator", "rule")):
        assert_one_error_line(disputelab(tmp_path / "store", *command), "named pipe")


def test_a_copy_of_the_damaged_file_is_all_recover_writes_beside_it(
    pristine: Path, tmp_path: Path
) -> None:
    """Recovery through a rebuilt first page reads a copy: the damaged file is left as
    it was, and nothing is left in its folder."""
    store = tmp_path / "store"
    shutil.copytree(pristine, store)
    data = bytearray((store / DB_NAME).read_bytes())
    data[0] ^= 0x01  # the header's first byte: SQLite no longer takes it for a database
    (store / DB_NAME).write_bytes(bytes(data))
    recovered = disputelab(store, "store", "recover", str(tmp_path / "rescued"))
    assert recovered.code == 0, recovered
    assert (store / DB_NAME).read_bytes() == bytes(data)
    assert {p.name for p in store.iterdir()} == {DB_NAME}
