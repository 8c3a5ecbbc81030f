"""Shell completion is on: `--install-completion` is offered, and the shell completes a
protocol parameter's key after `-P`."""

from __future__ import annotations

from typer.testing import CliRunner

from disputelab.cli import app


def _complete(words: str) -> list[str]:
    env = {
        "_DISPUTELAB_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
    }
    result = CliRunner().invoke(app, [], env=env, prog_name="disputelab")
    assert result.exit_code == 0, result.output
    return result.output.split()


def test_the_command_line_offers_to_install_completion() -> None:
    out = " ".join(CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output.split())
    assert "--install-completion" in out and "--show-completion" in out


def test_the_shell_completes_a_protocol_parameter_after_dash_p() -> None:
    assert _complete("disputelab run tenancy -P turn_t") == ["turn_taking="]
    assert "disclosure=" in _complete("disputelab run tenancy --param dis")
