"""Reading and writing scenario files (YAML or JSON) with errors a person can act on."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from disputelab import atomic
from disputelab.errors import DisputelabError
from disputelab.scenario.inputs import (
    MAX_FILE_BYTES,
    InputLimitError,
    UserFileError,
    load_json,
    load_yaml,
    read_user_file,
    yaml_problem,
)
from disputelab.scenario.schema import NOTHING_TO_NEGOTIATE, Scenario, ScenarioProblems

__all__ = [
    "MAX_SEED",
    "ScenarioError",
    "describe_validation_error",
    "dump_scenario",
    "load_scenario",
    "load_yaml",
    "parse_scenario_text",
    "save_scenario",
]


class ScenarioError(DisputelabError):
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
        said = str(e["msg"]).removeprefix("Value error, ")
        if not e["loc"] and kind == "value_error" and _NAMES_ITS_FIELD.match(said):
            lines.append(said)  # a check across fields that names the one to change
            continue
        if kind == "missing":
            msg = "missing; add this required field"
        elif kind == "extra_forbidden":
            msg = "unknown field; remove it or check its spelling"
        elif kind == "string_too_long":
            limit = (e.get("ctx") or {}).get("max_length")
            msg = (
                f"is {len(e['input']):,} characters long, more than the {limit} allowed; shorten it"
            )
        elif kind == "literal_error":
            given = repr(e.get("input"))
            given = given if len(given) <= 60 else given[:59] + "…"
            msg = f"is {given}, {e['msg'][0].lower()}{e['msg'][1:]}"
        else:
            msg = e["msg"].removeprefix("Value error, ")
            if "input" in e and kind not in ("value_error",) and _short(e["input"]):
                msg = f"{msg} (got {e['input']!r})"
        lines.append(f"{path}: {msg}")
    return lines


# A message that starts with where it applies: `conditions[0]: ...`, `params.budget: ...`.
_NAMES_ITS_FIELD = re.compile(r"^[A-Za-z_][\w.\[\]]*: ")


def _short(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) and len(repr(value)) <= 60


# Seeds are stored as SQLite integers and sent to backends as seed x 1000 + turn.
MAX_SEED = 2**53


def parse_scenario_text(text: str, source: str, fmt: str) -> Scenario:
    """Parse YAML or JSON text into a validated Scenario, or raise ScenarioError."""
    try:
        data = load_json(text, unique_keys=True) if fmt == "json" else load_yaml(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(source, [f"not valid JSON: {exc.msg} at line {exc.lineno}"]) from None
    except yaml.YAMLError as exc:
        raise ScenarioError(source, [yaml_problem(exc)]) from None
    except InputLimitError as exc:
        raise ScenarioError(source, [str(exc)]) from None
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise ScenarioError(source, [f"is {kind}; a scenario file must hold a mapping of fields"])
    if "scenarios" in data and "parties" not in data:
        raise ScenarioError(
            source, ["holds an experiment spec (it names scenarios), not a scenario"]
        )
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(source, all_problems(data, exc)) from None


def all_problems(data: dict[str, Any], err: ValidationError) -> list[str]:
    """Every problem of a scenario in one pass. pydantic checks across fields (weights
    summing to 100, rankings naming real options) only once every field is valid, so the
    fields at fault are dropped to their defaults and the rest checked again; a cross-field
    problem found then is added unless it is about a field already reported."""
    problems = describe_validation_error(err)
    faulty = [format_loc(tuple(e["loc"])) for e in err.errors(include_url=False)]
    # a dropped `terms` leaves nothing to negotiate; that says nothing about the topics
    terms_dropped = any(_within(f, "terms") for f in faulty)
    repaired = copy.deepcopy(data)
    if not all(_repair(repaired, e) for e in err.errors(include_url=False)):
        return problems
    try:
        Scenario.model_validate(repaired)
    except ValidationError as again:
        for e in again.errors(include_url=False):
            found = (e.get("ctx") or {}).get("error")
            if not isinstance(found, ScenarioProblems):
                continue
            for path, msg in found.problems:
                line = f"{path}: {msg}"
                if terms_dropped and (path, msg) == ("topics", NOTHING_TO_NEGOTIATE):
                    continue
                if line not in problems and not any(_follows_from(path, f) for f in faulty):
                    problems.append(line)
    return problems


def _follows_from(problem: str, faulty: str) -> bool:
    """Whether a cross-field problem at `problem` may come from dropping the field at
    `faulty`: it is that field, lies inside it, or is the mapping holding it (a dropped
    weight leaves its party's weights short of 100). A problem further up, such as two
    parties of one id, is about the whole list and stands."""
    key = faulty[len(problem) + 1 :] if faulty.startswith(problem + ".") else ""
    return _within(problem, faulty) or (key != "" and not any(c in key for c in ".["))


def _within(a: str, b: str) -> bool:
    """Whether path `a` is path `b` or lies inside it."""
    return a == b or (a.startswith(b) and a[len(b)] in ".[")


def _repair(data: dict[str, Any], error: Any) -> bool:
    """Put the field of a validation error out of the way of the cross-field checks: a
    faulty value is dropped (its default applies); a missing required text gets a
    stand-in of its own, except an id, which other fields refer to."""
    loc = tuple(error["loc"])
    if error["type"] == "missing" and loc and loc[-1] != "id":
        return _set(data, loc, f"<missing {format_loc(loc)}>")
    return _drop(data, loc)


def _set(data: Any, loc: tuple[int | str, ...], value: str) -> bool:
    """Set the key at `loc`; False where `loc` is not a key of a mapping."""
    found = _mapping_key(data, loc)
    if found is None:
        return False
    parent, key = found
    parent[key] = value
    return True


def _drop(data: Any, loc: tuple[int | str, ...]) -> bool:
    """Remove the key at `loc` (its default then applies); False where `loc` is not a
    key of a mapping (a list item, or the top level), which cannot be dropped safely."""
    found = _mapping_key(data, loc)
    if found is None:
        return False
    parent, key = found
    parent.pop(key, None)
    return True


def _mapping_key(data: Any, loc: tuple[int | str, ...]) -> tuple[dict[str, Any], str] | None:
    """The mapping whose key `loc` ends in, and that key; None where there is none."""
    if not loc or not isinstance(loc[-1], str):
        return None
    parent = data
    for part in loc[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return None
    return (parent, loc[-1]) if isinstance(parent, dict) else None


def load_scenario(path: str | Path) -> Scenario:
    """Load a scenario file, choosing JSON or YAML by extension."""
    p = Path(path)
    try:
        text = read_user_file(p, MAX_FILE_BYTES, "a .yaml or .json scenario file")
    except UserFileError as exc:
        raise ScenarioError(str(p), [exc.problem]) from None
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
    atomic.write_text(p, dump_scenario(s, fmt))
