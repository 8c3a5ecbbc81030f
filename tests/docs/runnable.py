"""Runnable examples in the README and docs/: find them, run them, compare what they print.

A fenced block is runnable when the line just before it is a marker comment, which
Markdown renders as nothing:

    <!-- runnable -->                    every command must exit 0
    <!-- runnable: exit=2 -->            the block's last command must exit 2
    <!-- runnable: needs=agentmediation -->   skipped unless that dataset is fetched

A `console` block holds commands after `$ ` and, below each, what it prints. The shown
output is compared line by line with standard output (or with standard output then
standard error, less the progress lines a slow run writes there) after normalising run
ids, timings and the workspace path, with runs of spaces collapsed; a line `...` (or
`…`) stands for any number of lines, and a line ending in `...` matches any line that
starts with the rest. A command with no lines below it is only checked for its exit
status. A `python` block runs as a script and must exit 0.

Every page gets its own workspace: a temporary folder that is the working directory of
its commands, with `examples/` linked in from the repository, a store of its own
(`DISPUTELAB_STORE`, inside it), a home and data folder of its own, and `disputelab` and `python`
on PATH meaning this checkout's code. Blocks of one page run in order and share it, as a
reader following the page would.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!--\s*runnable\s*(?::(?P<attrs>[^>]*))?-->\s*$")
FENCE = re.compile(r"^(?P<fence>```+)(?P<lang>[\w-]*)\s*$")
RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")
TIMING = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b")
PROGRESS = re.compile(r": \d+ of \d+ done(;|$)")
WILDCARD = {"...", "…"}
LANGUAGES = {"console", "python"}
COMMAND_TIMEOUT_S = 600  # generous: the suite must pass on a loaded two-core machine


@dataclass(frozen=True)
class Block:
    """One runnable fenced block: where it is, its language, its text and its marker."""

    page: Path
    line: int
    lang: str
    text: str
    attrs: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        page = self.page.relative_to(REPO) if self.page.is_relative_to(REPO) else self.page
        return f"{page}:{self.line}"


@dataclass(frozen=True)
class Command:
    """A `$ ` line of a console block and the output shown below it."""

    line: str
    shown: list[str]


class ExampleFailed(AssertionError):
    """A runnable block whose command failed or printed something else than shown."""


def _attrs(text: str | None) -> dict[str, str]:
    pairs = (item.split("=", 1) for item in (text or "").split() if "=" in item)
    return {key.strip(): value.strip() for key, value in pairs}


def collect(page: Path) -> list[Block]:
    """The runnable blocks of one Markdown page, in page order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    for i, line in enumerate(lines[:-1]):
        marker, fence = MARKER.match(line.strip()), FENCE.match(lines[i + 1])
        if not marker:
            continue
        if not fence or fence["lang"] not in LANGUAGES:
            raise ExampleFailed(f"{page}:{i + 1}: a runnable marker not followed by a block")
        end = next(j for j in range(i + 2, len(lines)) if lines[j].strip() == fence["fence"])
        text = "\n".join(lines[i + 2 : end])
        blocks.append(Block(page, i + 2, fence["lang"], text, _attrs(marker["attrs"])))
    return blocks


def commands(block: Block) -> list[Command]:
    """A console block's commands, each with the output lines shown under it."""
    found: list[Command] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            found.append(Command(line[2:], []))
        elif found:
            found[-1].shown.append(line)
        elif line.strip():
            raise ExampleFailed(f"{block.where}: output before the first `$ ` command")
    return found


def normalise(text: str, workspace: Path) -> list[str]:
    """Lines with run ids, timings and the workspace path replaced, spaces collapsed."""
    text = text.replace(str(workspace), ".")
    text = TIMING.sub("<time>", RUN_ID.sub("<run-id>", text))
    return [" ".join(line.split()) for line in text.splitlines()]


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether the printed lines fit the shown ones, wildcards and `...` endings included."""
    if not shown:
        return not printed
    head, rest = shown[0], shown[1:]
    if head in WILDCARD:
        return any(matches(rest, printed[k:]) for k in range(len(printed) + 1))
    if not printed:
        return False
    fits = printed[0].startswith(head[:-3].rstrip()) if head.endswith("...") else head == printed[0]
    return fits and matches(rest, printed[1:])


def _tools(bin_dir: Path) -> None:
    """`disputelab` and `python` on PATH, both this interpreter with this checkout."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, line in {
        "disputelab": f'exec "{sys.executable}" -m disputelab "$@"',
        "python": f'exec "{sys.executable}" "$@"',
    }.items():
        tool = bin_dir / name
        tool.write_text(f"#!/bin/sh\n{line}\n", encoding="utf-8")
        tool.chmod(0o755)


def workspace(root: Path, data: Path | None = None) -> dict[str, str]:
    """Make a page's workspace under `root` and return the environment its commands get."""
    (root / "examples").symlink_to(REPO / "examples")
    _tools(root / ".bin")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISPUTELAB_")}
    env.update(
        PATH=f"{root / '.bin'}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(REPO),
        HOME=str(root / ".home"),
        XDG_CACHE_HOME=str(root / ".cache"),
        # The default name, relative: the store lands in the workspace (the working
        # directory), and commands print the hints a reader sees, without `--store`.
        DISPUTELAB_STORE="disputelab-runs",
        DISPUTELAB_DATA=str(data or root / ".data"),
        COLUMNS="100",
        NO_COLOR="1",
        TERM="dumb",
    )
    return env


def _run(
    text: str, argv: list[str], root: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        input=text,
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )


def _printed(proc: subprocess.CompletedProcess[str], root: Path) -> list[list[str]]:
    """What a command printed, two ways: standard output alone, and standard output then
    standard error without the progress lines that a slow run writes there every few
    seconds (how many depends on the machine's speed, so a page never shows them)."""
    out = [line for line in normalise(proc.stdout, root) if line]
    err = [line for line in normalise(proc.stderr, root) if line and not PROGRESS.search(line)]
    return [out, out + err]


def _check_command(
    block: Block, cmd: Command, status: int, root: Path, env: dict[str, str]
) -> None:
    proc = _run(cmd.line, ["bash", "-o", "pipefail", "-s"], root, env)
    if proc.returncode != status:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        raise ExampleFailed(
            f"{block.where}: `{cmd.line}` exited {proc.returncode}, not {status}:\n{tail}"
        )
    shown = [line for line in normalise("\n".join(cmd.shown), root) if line]
    printed = _printed(proc, root)
    if shown and not any(matches(shown, lines) for lines in printed):
        raise ExampleFailed(
            f"{block.where}: `{cmd.line}` printed what the page does not show.\n"
            "--- shown\n" + "\n".join(shown) + "\n--- printed\n" + "\n".join(printed[-1])
        )


def run_block(block: Block, root: Path, env: dict[str, str]) -> None:
    """Run one block in a page's workspace; `ExampleFailed` says what went wrong."""
    if block.lang == "python":
        proc = _run(block.text, [sys.executable, "-"], root, env)
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
            raise ExampleFailed(f"{block.where}: the Python block failed:\n{tail}")
        return
    steps = commands(block)
    if not steps:
        raise ExampleFailed(f"{block.where}: a runnable console block with no `$ ` command")
    last_status = int(block.attrs.get("exit", "0"))
    for i, cmd in enumerate(steps):
        _check_command(block, cmd, last_status if i == len(steps) - 1 else 0, root, env)


def pages() -> list[Path]:
    """Every page whose blocks may be runnable: the README and everything under docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
