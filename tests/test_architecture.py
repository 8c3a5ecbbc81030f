"""The layout keeps its promises: protocols are known by registration, not by name;
imports flow one way between layers; command and protocol functions stay short."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from disputelab.protocols.base import PROTOCOLS

PACKAGE = Path(__file__).resolve().parents[1] / "disputelab"

# Layer -> packages it must never import (directly or lazily).
FORBIDDEN = {
    "agents": ("protocols", "experiments", "evaluation", "store", "report", "cli", "curation"),
    "protocols": ("experiments", "evaluation", "store", "report", "cli", "curation"),
    "evaluation": ("experiments", "store", "report", "cli", "curation"),
    "legal": ("agents", "protocols", "experiments", "evaluation", "store", "report", "cli"),
    "llm": ("agents", "protocols", "experiments", "evaluation", "store", "report", "cli"),
    "scenario": ("agents", "protocols", "experiments", "evaluation", "store", "report", "cli"),
    "experiments": ("report", "cli"),
    "store": ("agents", "protocols", "experiments", "evaluation", "report", "cli"),
    "report": ("cli",),
}


def _modules(folder: str = "") -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def test_no_module_outside_protocols_names_a_protocol_in_a_string() -> None:
    names = set(PROTOCOLS.names())
    assert {"roundtable", "staged"} <= names
    found = []
    for path in _modules():
        if (PACKAGE / "protocols") in path.parents:
            continue
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


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_imports_flow_one_way(layer: str) -> None:
    bad = []
    for path in _modules(layer):
        for module in _imports(path):
            for other in FORBIDDEN[layer]:
                if module == f"disputelab.{other}" or module.startswith(f"disputelab.{other}."):
                    bad.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "layer", ["cli", "protocols", "experiments", "agents/parties", "agents/paraphrase"]
)
def test_no_function_is_longer_than_sixty_lines(layer: str) -> None:
    long = []
    for path in _modules(layer):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                length = node.end_lineno - node.lineno + 1
                if length > 60:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({length})")
    assert not long, "\n".join(long)


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
