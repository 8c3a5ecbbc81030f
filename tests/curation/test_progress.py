"""`disputelab curate` shows it is alive while a seed's recast is in flight: off a
terminal, a plain progress line every few seconds, before the first verdict."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.testing import Scripted, fake_openai
from tests.curation import drafts

# Longer than two progress periods (5 s each), so a line is due even on a loaded machine
# whose heartbeat thread runs late.
SLOW_REPLY_S = 12.0


def test_a_slow_recast_prints_progress_lines_before_its_verdict(tmp_path: Path) -> None:
    seed = tmp_path / "seed.txt"
    seed.write_text("Two neighbours disagree over a fence that leans into one garden.", "utf-8")
    slow = Scripted(content=drafts.text(drafts.hard()), delay_s=SLOW_REPLY_S)
    with fake_openai(lambda body: slow) as server:
        result = CliRunner().invoke(
            app,
            [
                "--store",
                str(tmp_path / "runs"),
                "curate",
                str(seed),
                "--model",
                f"openai:m@{server.url}",
                "--out",
                str(tmp_path / "cur"),
            ],
        )
    assert result.exit_code == 0, result.output
    progress = [line for line in result.stderr.splitlines() if line.startswith("curate: ")]
    assert progress, result.stderr
    assert progress[0].startswith("curate: 0 done")
