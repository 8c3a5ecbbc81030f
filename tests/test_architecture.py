"""The layout keeps its promises: protocols are known by registration, not by name; each
protocol is one package that nothing outside it reaches into; imports flow one way
between layers; and no function is longer than sixty lines."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from disputelab.protocols.base import PROTOCOLS

PACKAGE = Path(__file__).resolve().parents[1] / "disputelab"
PROTOCOL_FOLDERS = sorted(
    p.name for p in (PACKAGE / "protocols").iterdir() if p.is_dir() and (p / "__init__.py").exists()
)

# The layers, lowest first. A module may import its own layer and those below it, never
# one above. A protocol's folder is a layer of its own, above the shared ones it uses.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("errors", "registry", "memo", "redact", "episode", "consensus", "atomic", "machine")),
    ("scenario", ("scenario", "scenarios")),
    ("services", ("llm", "store", "legal")),
    ("shared", ("agents", "humans", "evaluation", "tables", "compare")),
    (
        "framework",
        (
            "protocols.base",
            "protocols.session",
            "protocols.view",
            "protocols.play",
            "protocols.presets",
            "protocols.agent_params",
            "authoring",
            "plugin",
        ),
    ),
    ("protocols", (*tuple(f"protocols.{p}" for p in PROTOCOL_FOLDERS), "curation")),
    ("plan", ("plan",)),
    ("experiments", ("experiments",)),
    ("report", ("report",)),
    # annotation serves its pages with the web pieces (invites, page template).
    ("web", ("web", "annotation")),
    ("api", ("api",)),
    ("cli", ("cli", "__main__")),
)


def _unit_of(module: str) -> str | None:
    """The layer unit (`protocols.staged`, `llm`, ...) a dotted module belongs to."""
    parts = module.split(".")
    if parts[0] != "disputelab" or len(parts) < 2:
        return None
    if parts[1] == "protocols":
        if len(parts) == 2:
            return "protocols.base"  # the namespace's own docstring module
        return f"protocols.{parts[2]}"
    return parts[1]


@cache
def _rank() -> dict[str, int]:
    return {unit: i for i, (_, units) in enumerate(LAYERS) for unit in units}


def _modules(folder: str = "") -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def _dotted(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            # `from disputelab.protocols import staged` names the package too.
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("disputelab.")}


def test_every_unit_of_the_package_has_a_layer() -> None:
    units = {_unit_of(_dotted(p)) for p in _modules()}
    missing = sorted(u for u in units if u is not None and u not in _rank() and u != "__init__")
    assert not missing, f"units with no layer: {missing}"


def test_imports_flow_one_way() -> None:
    rank = _rank()
    bad = []
    for path in _modules():
        here = _unit_of(_dotted(path))
        if here is None or here not in rank:
            continue
        for module in _imports(path):
            there = _unit_of(module)
            if there is not None and there in rank and rank[there] > rank[here]:
                bad.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert not bad, "imports from a higher layer:\n" + "\n".join(sorted(bad))


def test_no_protocol_imports_another() -> None:
    bad = []
    for name in PROTOCOL_FOLDERS:
        for path in _modules(f"protocols/{name}"):
            for module in _imports(path):
                there = _unit_of(module)
                other = (there or "").removeprefix("protocols.")
                if other != name and other in PROTOCOL_FOLDERS:
                    bad.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert not bad, "\n".join(bad)


def test_nothing_outside_a_protocol_reaches_into_it() -> None:
    """Outside its folder a protocol is known through the registries; only the API may
    import its package's face (for a protocol's own tools: the settlement memory, the
    remediator's exemplars), and nothing imports a module inside it."""
    bad = []
    for path in _modules():
        dotted = _dotted(path)
        for module in _imports(path):
            parts = module.split(".")
            if len(parts) < 3 or parts[1] != "protocols" or parts[2] not in PROTOCOL_FOLDERS:
                continue
            if dotted.startswith(f"disputelab.protocols.{parts[2]}"):
                continue
            face = len(parts) == 3
            if not face or _unit_of(dotted) != "api":
                bad.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert not bad, "\n".join(bad)


# What the command line may import of the package: the API, the errors it raises, and
# its own modules. Everything else it needs comes through the API's re-exports.
CLI_MAY_IMPORT = ("disputelab.api", "disputelab.errors", "disputelab.cli")


def test_the_command_line_calls_only_the_api() -> None:
    """The library is the product and the command line a thin skin over it: every module
    of `cli/` (and `__main__`) imports from disputelab only the API, the errors and the
    command line's own modules, lazy imports in functions and TYPE_CHECKING ones too."""
    bad = []
    for path in [*_modules("cli"), PACKAGE / "__main__.py"]:
        for module in _imports(path):
            if not module.startswith(tuple(f"{m}." for m in CLI_MAY_IMPORT)) and (
                module not in CLI_MAY_IMPORT
            ):
                bad.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert not bad, "the command line goes around the API:\n" + "\n".join(sorted(bad))


def test_the_rule_for_the_command_line_sees_lazy_and_type_only_imports(tmp_path: Path) -> None:
    """The check above counts an import inside a function and one under TYPE_CHECKING:
    either would let a command reach past the API unnoticed."""
    module = tmp_path / "command.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from disputelab.store.sqlite import Store\n"
        "def command() -> None:\n"
        "    import disputelab.plan.run\n",
        encoding="utf-8",
    )
    assert {"disputelab.store.sqlite", "disputelab.plan.run"} <= _imports(module)


# Advice worded as a command-line option: `pass --judge-model`, `--resume to continue`.
CLI_ADVICE = re.compile(r"(pass|with|use|run) --[a-z]|--[a-z][a-z-]+ to ")


def _raised_texts(path: Path) -> Iterator[tuple[int, str]]:
    """The string parts of every exception raised in `path`, with their line."""
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for part in ast.walk(node.exc):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    yield part.lineno, part.value


def test_the_library_words_no_fix_as_a_command_line_option() -> None:
    """An error below the command line is raised from the API too, so it names a fix in
    the API's and the spec's words (`give `judges``); the command line turns those into
    its options (`cli.common.as_cli_advice`)."""
    bad = [
        f"{path.relative_to(PACKAGE)}:{line}: {text.strip()}"
        for path in _modules()
        if _unit_of(_dotted(path)) != "cli"
        for line, text in _raised_texts(path)
        if CLI_ADVICE.search(text)
    ]
    assert not bad, "command-line advice in library errors:\n" + "\n".join(bad)


def test_every_protocol_folder_registers_a_protocol() -> None:
    registered = set(PROTOCOLS.names())
    assert set(PROTOCOL_FOLDERS) <= registered


def test_no_module_outside_protocols_names_a_protocol_in_a_string() -> None:
    names = set(PROTOCOLS.names())
    assert {"roundtable", "staged"} <= names
    found = []
    for path in _modules():
        if (PACKAGE / "protocols") in path.parents or path.name == "registry.py":
            continue  # the registry lists the built-in plug-in modules
        tree = _tree(path)
        # A Literal type's vocabulary is not a protocol's name, even when a word is shared
        # (the roundtable mediator's "settlement" approach and the settlement protocol).
        typed = {
            id(c)
            for node in ast.walk(tree)
            if isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Literal"
            for c in ast.walk(node.slice)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in typed:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value!r}")
    assert not found, "protocol names outside protocols/:\n" + "\n".join(found)


def test_no_function_is_longer_than_sixty_lines() -> None:
    long = []
    for path in _modules():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                length = node.end_lineno - node.lineno + 1
                if length > 60:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({length})")
    assert not long, "\n".join(long)


@pytest.mark.parametrize(
    "folder",
    ["protocols", "agents", "humans", "evaluation", "store", "experiments", "plan", "tables"],
)
def test_each_package_states_its_contract_in_a_readme(folder: str) -> None:
    readme = PACKAGE / folder / "README.md"
    assert readme.is_file(), f"{folder}/ has no README.md"
    text = readme.read_text(encoding="utf-8")
    assert (len(text.splitlines()) >= 10 and "## Contract" in text) or folder == "tables"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that `path` imports, type-checking imports included."""
    out = _imports(path) & known
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.module:
            out |= {f"{node.module}.{a.name}" for a in node.names} & known
    return out


def test_the_agents_modules_import_one_another_without_a_cycle() -> None:
    """Not even for type checking: a module that needs another's type while that one
    needs it back wants an interface both can import (as `rule_thinking.Thinker`)."""
    paths = {_module_name(p): p for p in _modules("agents")}
    graph = {m: _imported_modules(p, set(paths)) - {m} for m, p in paths.items()}
    done: set[str] = set()

    def walk(module: str, trail: list[str]) -> None:
        if module in trail:
            cycle = [*trail[trail.index(module) :], module]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        for other in sorted(graph[module]):
            walk(other, [*trail, module])
        done.add(module)

    for module in sorted(graph):
        walk(module, [])


# A person's seat sees its own view and nothing more. The modules that build prompts for
# a person (the `humans` package and each protocol's `agents/human.py`) import nothing
# that holds another seat's data: no store, no oracle (`consensus`), no session (which
# holds every party), no evaluation, plan, runner, model layer or report.
HUMAN_SEAT_MAY_NOT_IMPORT = (
    "disputelab.store",
    "disputelab.consensus",
    "disputelab.protocols.session",
    "disputelab.evaluation",
    "disputelab.experiments",
    "disputelab.plan",
    "disputelab.llm",
    "disputelab.report",
    "disputelab.api",
)


def _human_seat_modules() -> list[Path]:
    return [*_modules("humans"), *sorted((PACKAGE / "protocols").glob("*/agents/human.py"))]


def test_a_human_seat_imports_nothing_beyond_its_seats_view() -> None:
    paths = _human_seat_modules()
    assert len(paths) >= 5  # the framework and each protocol's adapters
    bad = [
        f"{path.relative_to(PACKAGE)} imports {module}"
        for path in paths
        for module in _imports(path)
        if module.startswith(HUMAN_SEAT_MAY_NOT_IMPORT)
    ]
    assert not bad, "a human seat reaches past its view:\n" + "\n".join(bad)


def test_a_human_seat_is_built_from_its_own_view_only() -> None:
    """No class of a human seat's modules reads a whole scenario (`.scenario`, the
    `Scenario` type) or the bilateral market (which holds both sides' limits): the
    builders hand each seat the public scenario and its own party's data."""
    bad = []
    for path in _human_seat_modules():
        for cls in (n for n in ast.walk(_tree(path)) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                name = (
                    node.attr
                    if isinstance(node, ast.Attribute)
                    else node.id
                    if isinstance(node, ast.Name)
                    else ""
                )
                if name in ("scenario", "Scenario", "Market", "Session", "hidden"):
                    bad.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {cls.name} reads {name}")
    assert not bad, "\n".join(bad)
