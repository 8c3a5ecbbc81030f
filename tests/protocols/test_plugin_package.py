"""A plug-in package found as an installed one is: through the `disputelab.plugins` entry
point in its metadata, by fresh processes started outside the repository. Its protocol,
agent kind and evaluator are listed, played by `run` and `experiment`, and reported, and
not a line of disputelab names them.

The package (tests/plugins/show_of_hands) is put on the path with the metadata an
installer writes (a `.dist-info` folder holding `entry_points.txt`), so no network and no
build step are needed; the entry point is the same one `pip install -e` records.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[1] / "plugins" / "show_of_hands"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder on the path holding the plug-in's package and its installed metadata."""
    root = tmp_path_factory.mktemp("site")
    shutil.copytree(PLUGIN / "show_of_hands", root / "show_of_hands")
    info = root / "show_of_hands-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: show-of-hands\nVersion: 0.1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[disputelab.plugins]\nshow-of-hands = show_of_hands\n", encoding="utf-8"
    )
    return root


def _disputelab(site: Path, cwd: Path, *args: str) -> str:
    """`python -m disputelab ARGS` in a new process, in `cwd` (outside the repository)."""
    paths = [str(site), str(REPO), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    proc = subprocess.run(
        [sys.executable, "-m", "disputelab", "--store", str(cwd / "runs"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return " ".join(proc.stdout.split())


@pytest.mark.slow  # pip installs the plug-in package
def test_the_plugin_is_listed_with_its_seat_and_evaluator(site: Path, tmp_path: Path) -> None:
    text = _disputelab(site, tmp_path, "protocols", "list")
    assert "show-of-hands" in text and "counter" in text and "toy-hands" in text


@pytest.mark.slow  # pip installs the plug-in package
def test_the_plugin_runs_stores_and_reports_as_a_built_in_does(site: Path, tmp_path: Path) -> None:
    ran = _disputelab(
        site, tmp_path, "run", "tenancy", "--protocol", "show-of-hands", "-P", "rounds=2"
    )
    assert "rounds_played" in ran
    spec = tmp_path / "toy.yaml"
    spec.write_text(
        "name: toy-grid\nprotocol: show-of-hands\nscenarios: [tenancy, workplace]\n"
        "mediators: [counter]\nreplicates: 2\nrounds: 2\n",
        encoding="utf-8",
    )
    grid = _disputelab(site, tmp_path, "experiment", str(spec))
    assert "4 episodes planned, 4 run" in grid
    report = _disputelab(site, tmp_path, "report", "toy-grid")
    assert "show-of-hands protocol" in report and "rounds_played" in report


def test_without_its_metadata_the_plugin_is_unknown(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    shutil.copytree(PLUGIN / "show_of_hands", bare / "show_of_hands")  # no .dist-info
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(bare), str(REPO)])}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "disputelab",
            "--store",
            str(tmp_path / "runs"),
            "run",
            "tenancy",
            "--protocol",
            "show-of-hands",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 2 and "unknown protocol 'show-of-hands'" in proc.stderr
