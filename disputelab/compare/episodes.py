"""The episodes of the runs compared, as the comparison sees them: where each sits (run,
scenario, condition, seed, mediator, model), its metric values and what its model calls
cost. Read from the store in a few queries a run, without any turn."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from disputelab.errors import DisputelabError
from disputelab.evaluation.averaging import averaged_value
from disputelab.store.records import EpisodeRecord
from disputelab.store.sqlite import Store

BY = ("model", "mediator", "run", "people")  # what an arm of a comparison can be
AGENTS = "agents"  # by people: the arm of episodes with no person at any seat
RULE = "rule"


class CompareError(DisputelabError, ValueError):
    """A comparison that cannot be made: the message says what to change."""


@dataclass(frozen=True)
class Played:
    """One finished episode of a compared run."""

    run: str
    episode_id: str
    scenario: str
    condition: str
    seed: int
    mediator: str  # the mediator kind ('none' for an unmediated episode)
    model: str  # the backbone on a model axis, else the models its seats called
    unmediated: bool
    on_axis: bool  # played with a backbone of its run's model axis
    values: Mapping[str, float]  # `evaluator.metric` -> value
    usage: Mapping[str, float] = field(default_factory=dict)  # calls, tokens, cost_usd
    people: str = ""  # the seats people filled (`parties:tenant`), comma-separated


def model_of(agents: Mapping[str, Any]) -> str:
    """An episode's model: its backbone on a model axis, else the distinct models of its
    seats (`rule` when none calls one); the judge's is left out, as it scores them all."""
    backbone = agents.get("backbone")
    if isinstance(backbone, str) and backbone:
        return backbone
    seats = [str(v) for k, v in agents.items() if k.endswith("_model") and k != "judge_model" and v]
    return "+".join(dict.fromkeys(seats)) or RULE


def _usage(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """An episode's model calls, tokens and cost over every role; no cost when any role's
    is unknown (a model without a price)."""
    if not rows:
        return {}
    out = {
        "calls": float(sum(int(r["calls"]) for r in rows)),
        "tokens": float(sum(int(r["input_tokens"]) + int(r["output_tokens"]) for r in rows)),
    }
    costs = [r["cost_usd"] for r in rows]
    if all(c is not None for c in costs):
        out["cost_usd"] = math.fsum(float(c) for c in costs)
    return out


def _played(store: Store, rec: EpisodeRecord, values: dict[str, float]) -> Played:
    ep = rec.episode
    mediator = str(ep.agents.get("mediator", "none") or "none")
    return Played(
        rec.run_id,
        rec.episode_id,
        ep.scenario_id,
        ep.condition,
        ep.seed,
        mediator,
        model_of(ep.agents),
        rec.arm == "unmediated" or mediator == "none",
        bool(ep.agents.get("backbone")),
        values,
        _usage(store.usage(rec.episode_id)),
        people_of(ep.agents),
    )


def people_of(agents: Mapping[str, Any]) -> str:
    """The seats a person filled in an episode, sorted and comma-separated."""
    suffix = "_participant"
    return ",".join(sorted(k.removesuffix(suffix) for k in agents if k.endswith(suffix)))


def load_played(store: Store, run_ids: Sequence[str]) -> list[Played]:
    """Every finished episode of the runs, with its scores (averaged where a score is a
    mean over topics) keyed `evaluator.metric`."""
    out = []
    for run_id in run_ids:
        scores = store.run_scores(run_id)
        for rec in store.episode_headers(run_id):
            if not rec.complete:
                continue
            values = {}
            for s in scores.get(rec.episode_id, []):
                values[f"{s.evaluator}.{s.metric}"] = averaged_value(s)[0]
            out.append(_played(store, rec, values))
    return out


def metric_columns(played: Sequence[Played]) -> list[str]:
    """Every `evaluator.metric` scored on any of the episodes, sorted."""
    return sorted({k for p in played for k in p.values})


def resolve_metric(played: Sequence[Played], metric: str) -> str:
    """The `evaluator.metric` column `metric` names: itself, or the one evaluator's metric
    of that name that has a defined value; CompareError naming the choices otherwise."""
    columns = metric_columns(played)
    if metric in columns:
        return metric
    named = [c for c in columns if c.rsplit(".", 1)[-1] == metric]
    defined = [c for c in named if any(not math.isnan(p.values.get(c, math.nan)) for p in played)]
    if len(defined) == 1 or (len(named) == 1 and not defined):
        return (defined or named)[0]
    if not named:
        known = sorted({c.rsplit(".", 1)[-1] for c in columns})
        raise CompareError(f"no metric {metric!r} in these runs; use {', '.join(known) or 'none'}")
    raise CompareError(
        f"metric {metric!r} is scored by {', '.join(defined)}; name one as EVALUATOR.METRIC"
    )


def arm_of(p: Played, by: str) -> str:
    if by == "people":
        return f"people at {p.people}" if p.people else AGENTS
    return {"model": p.model, "mediator": p.mediator, "run": p.run}[by]


def match_of(p: Played, by: str) -> tuple[str, ...]:
    """What an episode shares with those of other arms it is compared with: its scenario,
    condition and seed, and the factors other than the arm's (by model across runs, the
    run is not one: a model run on its own pairs with another model's run; by people,
    a person's episode pairs with the agents' one of its scenario and seed that was
    mediated as it was, whatever seat the person took, the mediator's included)."""
    held = {
        "model": (p.mediator,),
        "mediator": (p.run, p.model),
        "run": (p.mediator,),
        "people": ("unmediated" if p.unmediated else "mediated",),
    }[by]
    return (p.scenario, p.condition, str(p.seed), *held)


def compared(played: Sequence[Played], by: str) -> list[Played]:
    """The episodes that belong to an arm: by model, an episode of a run with a model
    axis that no backbone played (the unmediated twin they all share) is no model's; by
    people, the agents' episodes count where mediated as the people's were."""
    if by not in BY:
        raise CompareError(f"by: unknown {by!r}; use {', '.join(BY)}")
    if by == "people":  # the agents' unmediated twins, where every person was mediated
        kinds = {p.unmediated for p in played if p.people}
        return [p for p in played if p.people or p.unmediated in kinds or not kinds]
    if by != "model":
        return list(played)
    axis = {p.run for p in played if p.on_axis}
    return [p for p in played if p.on_axis or p.run not in axis]
