"""MkDocs hook: the CLI and API reference pages are generated at build time.

`<!-- generated: cli-reference -->` becomes one section per command of the typer app
(usage, help, arguments and options with their defaults), read from the command tree
typer builds, so the page cannot drift from the code. typer carries its own copy of
click, so the tree is read by duck typing rather than through click's classes.
`<!-- generated: api-reference -->`
becomes one mkdocstrings block per public name of the `disputelab` package
(`disputelab.__all__`), so a name that moves between modules is still found and a name
that no longer resolves fails the strict build. Each package README under
`disputelab/` (the package's contract) becomes the page `packages/NAME.md`, listed
under "Package contracts" in the nav, so a new package's README needs no edit here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

PACKAGE = Path(__file__).resolve().parents[2] / "disputelab"
CLI_MARKER = "<!-- generated: cli-reference -->"
API_MARKER = "<!-- generated: api-reference -->"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default(param: Any) -> str:
    value = param.default
    if value is None or value == () or callable(value) or getattr(param, "is_flag", False):
        return ""
    return f"`{value}`"


def _option_rows(command: Any, ctx: Any) -> list[str]:
    rows = []
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        if param.param_type_name == "argument":
            name = f"`{param.human_readable_name}`"
            help_text = getattr(param, "help", None) or "(argument)"
        else:
            name = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
            help_text = getattr(param, "help", None) or ""
        env = f" (env `{param.envvar}`)" if getattr(param, "envvar", None) else ""
        rows.append(f"| {name} | {_cell(help_text)}{env} | {_default(param)} |")
    return rows


def _section(command: Any, path: list[str], parent: Any) -> list[str]:
    ctx = command.context_class(command, info_name=path[-1], parent=parent)
    title = " ".join(path)
    lines = [f"{'#' * min(len(path) + 1, 4)} `{title}`", ""]
    lines += [_cell(command.help or ""), "", "```text", command.get_usage(ctx), "```", ""]
    rows = _option_rows(command, ctx)
    if rows:
        lines += ["| argument or option | meaning | default |", "|---|---|---|", *rows, ""]
    if hasattr(command, "list_commands"):
        for name in sorted(command.list_commands(ctx)):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                lines += _section(sub, [*path, name], ctx)
    return lines


def cli_reference() -> str:
    """The whole command line as Markdown, from the command definitions."""
    from disputelab.cli import app

    return "\n".join(_section(typer.main.get_command(app), ["disputelab"], None))


def api_reference() -> str:
    """A mkdocstrings block for every public name of the package."""
    import disputelab

    names = sorted(name for name in disputelab.__all__ if not name.startswith("__"))
    return "\n\n".join(f"::: disputelab.{name}" for name in names)


def on_page_markdown(markdown: str, **_: Any) -> str:
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    if API_MARKER in markdown:
        markdown = markdown.replace(API_MARKER, api_reference())
    return markdown


def _package_readmes() -> list[Path]:
    return sorted(PACKAGE.glob("*/README.md"))


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    pages = [f"packages/{readme.parent.name}.md" for readme in _package_readmes()]
    reference = next(s for s in config.nav or [] if isinstance(s, dict) and "Reference" in s)
    reference["Reference"].append({"Package contracts": pages})
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for readme in _package_readmes():
        content = readme.read_text(encoding="utf-8")
        files.append(File.generated(config, f"packages/{readme.parent.name}.md", content=content))
    return files
