"""The model axis of an experiment: backbones, each a set of models for the seats, crossed
with the grid like conditions.

A spec names them either as lists in `models:` (`models: {mediator: [A, B, C]}`; lists
for several roles are crossed) or by name (`backbones: {gpt: {mediator: A}, open: {...}}`).
Every backbone plays the same scenarios, conditions and seeds, so that two backbones'
episodes differ only in their models: comparisons between them are paired.

A backbone sets models of seats only (parties, mediator, counsel and their calls): one
judge scores every backbone, and one writer writes every scenario, or the comparison
would no longer hold the scenario and its scoring fixed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any

RULE = "rule"
# Roles a backbone may not set: they must be the same for every backbone compared.
SHARED_ROLES = ("judge", "writer")
MAX_BACKBONES = 64
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+\-]{0,63}$")
# What a model name may keep in a backbone's name (episode ids are `/`-separated).
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:+\-]+")


def model_label(model: str) -> str:
    """The name a listed model goes by in episode ids and tables: the model without its
    endpoint (`openai:gpt-4o@http://host/v1` -> `openai:gpt-4o`), unsafe characters as
    `-`."""
    name = model.split("@", 1)[0] or model
    return _UNSAFE.sub("-", name).strip("-")[:64] or "model"


def expand_model_lists(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with the lists in its `models:` turned into named backbones (crossed when
    several roles list models); ValueError naming the problem in the spec's words. A spec
    without lists is returned as it is."""
    models = data.get("models")
    if not isinstance(models, dict):
        return data
    lists = {r: m for r, m in models.items() if isinstance(m, list)}
    if not lists:
        return data
    if data.get("backbones"):
        raise ValueError(
            "models: give the model axis either as lists in models or as backbones, not both"
        )
    for role, listed in lists.items():
        if role in SHARED_ROLES:
            raise ValueError(
                f"models.{role}: one {role} serves every model compared; a list of models "
                "is for the seats (parties, mediator, counsel)"
            )
        if not listed or not all(isinstance(m, str) and m for m in listed):
            raise ValueError(f"models.{role}: a list of model names, at least one")
        twice = [m for m in dict.fromkeys(listed) if listed.count(m) > 1]
        if twice:
            raise ValueError(
                f"models.{role}: {twice[0]} listed more than once; list each model once"
            )
    roles = list(lists)
    combos = itertools.product(*(list(dict.fromkeys(lists[r])) for r in roles))
    backbones = _named(
        [(combo, dict(zip(roles, combo, strict=True))) for combo in combos],
        "models",
        "name each with backbones: {NAME: {ROLE: MODEL}}",
    )
    common = {r: m for r, m in models.items() if r not in lists}
    return {**data, "models": common, "backbones": backbones}


def same_model_backbones(
    models: Sequence[str], roles: Sequence[str], where: str = "model"
) -> dict[str, dict[str, str]]:
    """One backbone per model, each playing every one of `roles` (a run's repeated
    `--model`: the same model in each seat, not the seats' models crossed); ValueError,
    worded for `where`, for a model named twice or two that would share a name."""
    repeated = [m for m in dict.fromkeys(models) if list(models).count(m) > 1]
    if repeated:
        raise ValueError(
            f"{where}: {', '.join(repeated)} given more than once; each model is compared once"
        )
    return _named(
        [((m,), dict.fromkeys(roles, m)) for m in models],
        where,
        "give each through a disputelab.toml profile of its own name",
    )


def _named(
    combos: Sequence[tuple[Sequence[str], dict[str, str]]], where: str, fix: str
) -> dict[str, dict[str, str]]:
    """The backbones (each `(models, role -> model)`), each under the name its models go
    by in episode ids and tables."""
    backbones: dict[str, dict[str, str]] = {}
    for models, combo in combos:
        name = "+".join(model_label(m) for m in models)
        if name in backbones:
            raise ValueError(
                f"{where}: {', '.join(models)} would share the name {name!r} with another "
                f"entry in the results; {fix}"
            )
        backbones[name] = combo
    return backbones


def backbone_problems(
    backbones: Mapping[str, Mapping[str, str]], models: Mapping[str, str], roles: set[str]
) -> list[str]:
    """What is wrong with the named backbones: a bad name, a role no seat has (or one that
    must be shared), `rule` as a model, a role also set in `models:`."""
    if len(backbones) > MAX_BACKBONES:
        return [f"backbones: {len(backbones)} backbones, more than {MAX_BACKBONES}"]
    problems = []
    for name, chosen in backbones.items():
        if not NAME_PATTERN.match(name):
            problems.append(
                f"backbones: {name!r} is not a usable name (letters, digits and _ . : + -, "
                "at most 64)"
            )
        if not chosen:
            problems.append(f"backbones.{name}: names no model; give {{ROLE: MODEL}}")
        problems += [_role_problem(name, r, m, models, roles) for r, m in chosen.items()]
    return [p for p in problems if p]


def _role_problem(
    name: str, role: str, model: str, models: Mapping[str, str], roles: set[str]
) -> str:
    where = f"backbones.{name}.{role}"
    if role in SHARED_ROLES:
        return (
            f"{where}: one {role} serves every backbone (set it in models:), so that "
            "the backbones are compared on the same footing"
        )
    if role not in roles:
        return f"{where}: unknown role; use {', '.join(sorted(roles))}"
    if not model or model == RULE:
        what = model or "an empty name"
        return f"{where}: {what} is not a model; compare agent kinds with mediators:"
    if role in models:
        return f"{where}: also set in models:; a role is either shared or on the axis"
    return ""


def models_of(
    backbones: Mapping[str, Mapping[str, str]], models: Mapping[str, str], name: str
) -> dict[str, str]:
    """The models of backbone `name` (the spec's shared models where it sets none)."""
    return {**models, **backbones.get(name, {})}


def each_models(
    backbones: Mapping[str, Mapping[str, str]], models: Mapping[str, str]
) -> list[dict[str, str]]:
    """The models of every backbone, or the spec's own when it has no model axis."""
    if not backbones:
        return [dict(models)]
    return [models_of(backbones, models, name) for name in backbones]


def mediator_only(backbones: Mapping[str, Mapping[str, str]], mediator_role: str) -> bool:
    """Whether the backbones differ in the mediator seat's models only: then the
    unmediated twin of a cell is the same episode for every backbone, played once."""
    return all(
        r == mediator_role or r.startswith(f"{mediator_role}.")
        for b in backbones.values()
        for r in b
    )
