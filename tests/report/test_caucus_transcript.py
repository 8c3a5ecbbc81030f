"""A caucus shows in the transcript as private to the mediator."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from disputelab.cli import app


def test_the_markdown_transcript_marks_caucus_turns_private(tmp_path: Path) -> None:
    store = str(tmp_path / "runs")
    cli = CliRunner()
    ran = cli.invoke(
        app, ["--store", store, "run", "tenancy", "--mediator", "rule", "--param", "caucus=1"]
    )
    assert ran.exit_code == 0, ran.output
    text = cli.invoke(app, ["--store", store, "report", "last"]).output
    private = [line for line in text.splitlines() if "(in private, to the mediator only)" in line]
    assert private, "no caucus turn in the transcript"
    assert all(line.startswith("**after party turn") for line in private)
