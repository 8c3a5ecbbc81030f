"""Reading and writing scenario files (YAML or JSON) with errors a person can act on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from disputelab.scenario.schema import Scenario, ScenarioProblems


class ScenarioError(Exception):
    """A scenario could not be loaded; `problems` holds one line per fault."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


def format_loc(loc: tuple[int | str, ...]) -> str:
    """('parties', 1, 'weights') -> 'parties[1].weights'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def describe_validation_error(err: ValidationError) -> list[str]:
    """Turn pydantic's errors into 'path: problem; fix' lines."""
    lines: list[str] = []
    for e in err.errors(include_url=False):
        ctx_error = (e.get("ctx") or {}).get("error")
        if isinstance(ctx_error, ScenarioProblems):
            lines += [f"{path}: {msg}" for path, msg in ctx_error.problems]
            continue
        path = format_loc(tuple(e["loc"]))
        kind = e["type"]
        if kind == "missing":
            msg = "missing; add this required field"
        elif kind == "extra_forbidden":
            msg = "unknown field; remove it or check its spelling"
        elif kind == "literal_error":
            msg = f"is {e.get('input')!r}, {e['msg'][0].lower()}{e['msg'][1:]}"
        else:
            msg = e["msg"].removeprefix("Value error, ")
            if "input" in e and kind not in ("value_error",) and _short(e["input"]):
                msg = f"{msg} (got {e['input']!r})"
        lines.append(f"{path}: {msg}")
    return lines


def _short(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) and len(repr(value)) <= 60


# Seeds are stored as SQLite integers and sent to backends as seed x 1000 + turn.
MAX_SEED = 2**53


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, except that a key given twice in one mapping is an error: the
    last one silently winning hides a typo in a scenario or a spec."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """Parse YAML safely, refusing a key given twice in one mapping."""
    return yaml.load(text, Loader=_UniqueKeyLoader)


def parse_scenario_text(text: str, source: str, fmt: str) -> Scenario:
    """Parse YAML or JSON text into a validated Scenario, or raise ScenarioError."""
    try:
        data = json.loads(text) if fmt == "json" else load_yaml(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(source, [f"not valid JSON: {exc.msg} at line {exc.lineno}"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ScenarioError(source, [f"not valid YAML: {problem}{where}"]) from None
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise ScenarioError(source, [f"is {kind}; a scenario file must hold a mapping of fields"])
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(source, describe_validation_error(exc)) from None


def load_scenario(path: str | Path) -> Scenario:
    """Load a scenario file, choosing JSON or YAML by extension."""
    p = Path(path)
    if not p.exists():
        raise ScenarioError(str(p), ["no such file; check the path"])
    if p.is_dir():
        raise ScenarioError(str(p), ["is a directory; give a .yaml or .json scenario file"])
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(str(p), [f"cannot be read: {exc}"]) from None
    fmt = "json" if p.suffix.lower() == ".json" else "yaml"
    return parse_scenario_text(text, str(p), fmt)


def scenario_to_data(s: Scenario) -> dict[str, Any]:
    return s.model_dump(mode="json", exclude_defaults=False)


def dump_scenario(s: Scenario, fmt: str = "yaml") -> str:
    """Serialise a scenario to YAML (default) or JSON text that loads back unchanged."""
    data = scenario_to_data(s)
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, indent=2)
    return str(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100))


def save_scenario(s: Scenario, path: str | Path) -> None:
    p = Path(path)
    fmt = "json" if p.suffix.lower() == ".json" else "yaml"
    p.write_text(dump_scenario(s, fmt), encoding="utf-8")
