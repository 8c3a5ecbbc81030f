"""What the command line imports to start: each command loads its own modules when it is
looked up, so `disputelab --version` loads none of them and a rule run none of the heavy
libraries that only other commands use. Read from `sys.modules` in a fresh interpreter:
what is imported, not how long it took (timings are in benchmarks/bench_startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from disputelab.api import DEFAULT_STORE
from disputelab.cli import COMMANDS, DEFAULT_STORE_NAME, app
from tests.helpers import WAIT_S

# Libraries that cost tens to hundreds of milliseconds to import and that no rule run
# uses: reports, statistics, the model SDK, embeddings, clusters, JSON repair.
HEAVY = (
    "pandas",
    "pyarrow",
    "scipy",
    "statsmodels",
    "matplotlib",
    "openai",
    "aiohttp",
    "jinja2",
    "sentence_transformers",
    "torch",
    "ray",
    "SALib",
    "json_repair",  # for a broken model reply only
)

# Run the command line in this interpreter, then print the top-level modules loaded.
PROBE = """
import json, sys
argv = json.loads(sys.argv[1])
sys.argv = ["disputelab", *argv]
from disputelab.cli import main
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""


def _modules_after(cwd: Path, *args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args))],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    lines = [line for line in proc.stderr.splitlines() if line.startswith("MODULES ")]
    assert lines, proc.stderr
    return set(json.loads(lines[-1].removeprefix("MODULES ")))


def _ours(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith("disputelab"))


def _tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_importing_the_command_line_loads_no_command_and_no_heavy_library() -> None:
    probe = "import json, sys, disputelab.cli; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=WAIT_S, check=False
    )
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.loads(proc.stdout))
    assert _ours(loaded) == ["disputelab", "disputelab.cli"]
    assert not _tops(loaded) & {*HEAVY, "numpy", "pydantic", "yaml", "rich"}


def test_the_version_loads_neither_the_api_nor_any_command(tmp_path: Path) -> None:
    loaded = _modules_after(tmp_path, "--version")
    assert _ours(loaded) == ["disputelab", "disputelab.cli"]


def test_a_rule_run_loads_its_own_command_and_none_of_the_heavy_libraries(tmp_path: Path) -> None:
    loaded = _modules_after(tmp_path, "--store", str(tmp_path / "runs"), "run", "tenancy")
    assert (tmp_path / "runs").is_dir(), "the run did not get as far as its store"
    assert "disputelab.cli.run" in loaded
    others = {module for name, (module, _) in COMMANDS.items() if name != "run"}
    assert not loaded & others, "another command's module loaded"
    assert not _tops(loaded) & set(HEAVY)


def test_the_default_store_of_the_command_line_is_the_apis() -> None:
    assert str(DEFAULT_STORE) == DEFAULT_STORE_NAME


def test_the_help_lists_every_command_loaded_on_demand_under_its_name() -> None:
    result = CliRunner().invoke(app, ["--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    listed = [line.split()[1] for line in result.output.splitlines() if line.startswith("│ ")]
    assert [name for name in listed if name in COMMANDS] == list(COMMANDS)
