"""Ablation: the grid again with named behaviour parameters at their neutral values.

A target is a behaviour parameter (`mediator.calming`) or a condition
(`posture:competing`), which stands for every parameter that condition acts through;
`each` stands for every condition of the spec that acts through any. Each target's grid
is an experiment of its own, `NAME.ablate.TARGET`, stored and resumed like any other,
whose config names the experiment it ablates; the report puts its effects beside the
original's.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from disputelab.protocols.base import behaviour_rows
from disputelab.scenario.behaviour import PARAMETERS, BehaviourError, neutral_overrides
from disputelab.scenario.conditions import ConditionError, apply_condition, condition_parameters
from disputelab.scenario.library import builtin_scenario

if TYPE_CHECKING:
    from disputelab.plan.spec import ExperimentSpec

EACH = "each"


def _moved(condition: str, protocol: str | None) -> tuple[str, ...]:
    """The parameters `condition` moves that `protocol`'s agents read (None: all)."""
    names = condition_parameters(condition)
    return names if protocol is None else behaviour_rows(protocol, names)


def target_parameters(target: str, protocol: str | None = None) -> tuple[str, ...]:
    """The behaviour parameters a target sets to neutral (of a condition's, those the
    agents of `protocol` read); ValueError with one line if there is nothing to ablate."""
    if target in PARAMETERS:
        neutral_overrides([target])  # a level without a neutral value is refused here
        return (target,)
    if not target.strip():
        raise ValueError("ablate: an empty entry; name a parameter or a condition")
    try:
        # Applying it checks the condition's argument too (posture:nope, culture:XX-US).
        apply_condition(builtin_scenario("tenancy"), target)
        names = _moved(target, protocol)
    except ConditionError as exc:
        if ":" not in target and "." in target:
            neutral_overrides([target])  # says "unknown behaviour parameter", with hints
        raise ValueError(f"ablate: {exc}") from None
    if not names:
        raise ValueError(
            f"ablate: {target} acts through no behaviour parameter (its effect on rule "
            "agents is structural), so there is nothing to set to neutral"
        )
    return names


def check_targets(
    targets: list[str], conditions: list[str], protocol: str | None = None
) -> list[str]:
    """Problems with an `ablate:` list, one line each."""
    problems = []
    for t in targets:
        if t == EACH:
            if not expand_targets([EACH], conditions, protocol):
                problems.append(
                    "ablate: each: no condition of the spec acts through a behaviour parameter"
                )
            continue
        try:
            target_parameters(t, protocol)
        except (ValueError, BehaviourError) as exc:
            problems.append(str(exc) if str(exc).startswith("ablate") else f"ablate: {exc}")
    return problems


def expand_targets(
    targets: list[str], conditions: list[str], protocol: str | None = None
) -> list[str]:
    """`each` replaced by the spec's conditions that act through parameters, keeping one
    condition per set of parameters (strategy:competing@one and @all ablate the same
    ones, so they share one grid); order kept."""
    out: list[str] = []
    for t in targets:
        if t != EACH:
            out.append(t)
            continue
        seen = {frozenset(_moved(x, protocol)) for x in out if ":" in x}
        for c in conditions:
            names = frozenset(_moved(c, protocol))
            if names and names not in seen:
                seen.add(names)
                out.append(c)
    return list(dict.fromkeys(out))


def ablated_name(name: str, target: str) -> str:
    return f"{name}.ablate.{re.sub(r'[^A-Za-z0-9_.-]', '-', target)}"


def ablated_spec(spec: ExperimentSpec, target: str) -> ExperimentSpec:
    """`spec` with the target's parameters at neutral, under its own name."""
    from disputelab.plan.spec import ExperimentSpec

    data: dict[str, Any] = spec.model_dump()
    params = dict(data["params"])
    params["behaviour"] = {
        **params.get("behaviour", {}),
        **neutral_overrides(target_parameters(target, spec.protocol)),
    }
    data.update(
        name=ablated_name(spec.name, target),
        params=params,
        ablate=[],
        ablation_of=spec.name,
        ablated=target,
    )
    return ExperimentSpec.model_validate(data)


def ablated_specs(spec: ExperimentSpec) -> list[ExperimentSpec]:
    targets = expand_targets(spec.ablate, spec.conditions, spec.protocol)
    return [ablated_spec(spec, t) for t in targets]
