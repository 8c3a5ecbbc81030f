"""A model backend from an installed package: the `disputelab.models` entry point named
for its prefix. `echo/MODEL` is then played, stored and costed as a built-in model is,
and a broken plug-in stops only the runs that name it, with one line naming it.

The package (tests/plugins/echo_models) is put on the path with the metadata an
installer writes (a `.dist-info` folder holding `entry_points.txt`), as the protocol
plug-in's test does: entry points are found the way they are for a `pip install`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app

PLUGIN = Path(__file__).resolve().parents[1] / "plugins" / "echo_models"
REPO = Path(__file__).resolve().parents[2]


def _dist(root: Path, name: str, entry_points: str) -> None:
    """Installed metadata for a distribution `name` declaring `entry_points`."""
    info = root / f"{name}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The echo plug-in, installed on the path; the working directory beside it."""
    root = tmp_path / "site"
    shutil.copytree(PLUGIN / "echo_models", root / "echo_models")
    _dist(
        root,
        "echo_models",
        "[disputelab.models]\necho = echo_models:chat_model\necho-priced = echo_models:endpoint\n",
    )
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.chdir(tmp_path)
    return root


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, ["--store", "runs", *args])


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_plugin_prefix_is_played_and_its_usage_reported(site: Path) -> None:
    ran = _cli(
        "run", "tenancy", "--model", "echo/any-model", "--mediator", "social", "-P", "budget=2"
    )
    assert ran.exit_code == 0, ran.output
    out = _flat(ran.stdout)
    assert "echo from any-model" in _flat(_cli("report", "last").stdout)
    assert "model use, parties (echo/any-model)" in out and "cost unknown" in out


def test_an_endpoint_from_a_plugin_keeps_its_prices(site: Path) -> None:
    ran = _cli(
        "run", "tenancy", "--model", "echo-priced/m", "--mediator", "social", "-P", "budget=2"
    )
    assert ran.exit_code == 0, ran.output
    out = _flat(ran.stdout)
    assert "model use, parties (echo-priced/m)" in out and "cost unknown" not in out


def test_the_unknown_name_message_lists_installed_prefixes(site: Path) -> None:
    ran = _cli("run", "tenancy", "--model", "nosuch/m")
    assert ran.exit_code == 2 and "echo/, echo-priced/" in _flat(ran.stderr)


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (
            "broken = no_such_module_for_disputelab:make",
            "the model plug-in 'broken' (disputelab.models entry point "
            "'no_such_module_for_disputelab:make') cannot be loaded: ModuleNotFoundError",
        ),
        ("broken = json:__doc__", "is not a function of a ModelRequest"),
        ("broken = json:dumps", "failed on 'broken/m': TypeError"),
        ("broken = json:loads", "failed on 'broken/m': TypeError"),
    ],
)
def test_a_broken_plugin_is_named_in_one_line(site: Path, entry: str, said: str) -> None:
    _dist(site, "broken_models", f"[disputelab.models]\n{entry}\n")
    ran = _cli("run", "tenancy", "--model", "broken/m")
    assert ran.exit_code == 2, ran.output
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], lines
    assert _cli("run", "tenancy", "--model", "echo/m", "-P", "budget=2").exit_code == 0


def test_a_plugin_may_not_take_a_built_in_prefix(site: Path) -> None:
    _dist(site, "greedy_models", "[disputelab.models]\nopenai = echo_models:chat_model\n")
    ran = _cli("run", "tenancy", "--model", "echo/m")
    assert ran.exit_code == 2
    assert "claims the built-in prefix 'openai/'" in _flat(ran.stderr)


def test_without_its_metadata_the_prefix_is_unknown(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    shutil.copytree(PLUGIN / "echo_models", bare / "echo_models")  # no .dist-info
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(bare), str(REPO)])}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "disputelab",
            "--store",
            "runs",
            "run",
            "tenancy",
            "--model",
            "echo/m",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 2 and "unknown model 'echo/m'" in proc.stderr
