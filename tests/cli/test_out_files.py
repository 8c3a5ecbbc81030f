"""Every `--out` file is replaced whole or not at all: on a full disk the previous report
stays as it was and one error line says the disk is full (exit status 2).

The full disk is real: a tiny RAM file system mounted for the test (which needs the right
to mount, so it is skipped where that is not allowed).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_cli import assert_one_error_line, invoke

OLD = "# the good report from yesterday\n"


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 64 KiB file system with no room left."""
    folder = tmp_path / f"tiny-{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small file system here")
    try:
        (folder / "report.html").write_text(OLD, encoding="utf-8")
        with open(folder / "filler", "wb", buffering=0) as fh:
            try:
                while True:
                    fh.write(b"x" * 4096)
            except OSError:
                pass
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    assert invoke(runs, "run", "tenancy", "--budget", "4").exit_code == 0
    return runs


@pytest.mark.parametrize("fmt", ["html", "parquet"])
def test_a_full_disk_keeps_the_previous_report(full_disk: Path, store: Path, fmt: str) -> None:
    target = full_disk / "report.html"
    result = invoke(store, "report", "last", "--format", fmt, "--out", str(target))
    assert_one_error_line(result, f"--out {target}", "the disk is full", "unchanged")
    assert target.read_text(encoding="utf-8") == OLD
    assert sorted(os.listdir(full_disk)) == ["filler", "report.html"]  # no leftover


def test_compare_out_on_a_full_disk_keeps_the_previous_file(full_disk: Path, store: Path) -> None:
    target = full_disk / "report.html"
    assert invoke(store, "run", "tenancy", "--budget", "4", "--mediator", "rule").exit_code == 0
    runs = [r["run"] for r in json.loads(invoke(store, "runs", "--format", "json").stdout)]
    result = invoke(store, "compare", *runs, "--by", "mediator", "--out", str(target))
    assert_one_error_line(result, "the disk is full")
    assert target.read_text(encoding="utf-8") == OLD


def test_a_report_replaces_the_previous_one_whole(tmp_path: Path, store: Path) -> None:
    target = tmp_path / "report.md"
    target.write_text(OLD, encoding="utf-8")
    target.chmod(0o640)
    assert invoke(store, "report", "last", "--out", str(target)).exit_code == 0
    assert target.read_text(encoding="utf-8").startswith("# Run ")
    assert target.stat().st_mode & 0o777 == 0o640  # as readable as it was
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md", "runs"]
