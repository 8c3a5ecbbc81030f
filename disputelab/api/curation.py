"""Curation (SoCRATES section 3.2): recast seed texts into scenarios, with a model or
offline by rules, and keep the ones that reach impasse unmediated.

    from disputelab.api import curation, open_models

    hub = open_models(["local"])
    result = await curation.curate_async(["seeds/"], model="local", hub=hub, out="curated")
    print(len(result.accepted), "kept;", result.rejected_log)

    # No model: the rule recaster and its template library.
    result = await curation.curate_async(["seeds/"], recast="rules", out="curated")
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from disputelab.api.catalog import CatalogError
from disputelab.curation import (
    Accepted,
    CurationConfig,
    CurationResult,
    FilterVerdict,
    Recaster,
    Rejected,
    RuleRecaster,
    Verdict,
    agreement_zone,
    impasse_filter,
    read_seed_file,
    rule_recast,
)
from disputelab.curation import curate as run_curation
from disputelab.errors import DisputelabError
from disputelab.scenario.library import builtin_scenarios
from disputelab.scenario.schema import SOCRATES_DOMAINS, Scenario

if TYPE_CHECKING:
    from disputelab.llm.base import ChatModel
    from disputelab.llm.models import ModelHub

__all__ = [
    "DISCLOSURES",
    "RECASTERS",
    "Accepted",
    "CurationResult",
    "Rejected",
    "Verdict",
    "curate_async",
    "impasse_table",
    "rule_scenarios",
]

DISCLOSURES = ("negotiator", "full")

RecastBy = Literal["model", "rules"]
RECASTERS: tuple[RecastBy, ...] = ("model", "rules")


class CurationArgumentError(DisputelabError, ValueError):
    """Arguments of a curation that do not fit together (a model for the rules, say)."""


async def curate_async(
    paths: Sequence[str | os.PathLike[str]],
    *,
    model: str | None = None,
    hub: ModelHub | None = None,
    recast: RecastBy = "model",
    out: str | os.PathLike[str] = "curated",
    concurrency: int = 4,
    keep_if_unresolved: int = 2,
    on_verdict: Callable[[Verdict], None] | None = None,
) -> CurationResult:
    """Recast every seed of `paths` (seed files, .txt, .md or .jsonl, or folders of them)
    into a scenario, replay it unmediated three times, and keep it as YAML in `out` when
    at least `keep_if_unresolved` replays fail to resolve; every rejection (a seed that
    nearly repeats an earlier one among them) goes to `out/rejected.jsonl`. With
    `recast="model"`, `model` (opened in `hub`) writes each scenario; with
    `recast="rules"`, stated rules and disputelab's template library do, offline, and
    each scenario's `assumptions` say what was read from the seed and what was assumed.
    `on_verdict` hears each Accepted or Rejected as it is decided."""
    config = CurationConfig(concurrency=concurrency, min_unresolved=keep_if_unresolved)
    recaster = _recaster(recast, model, hub)
    return await run_curation(
        [Path(p) for p in paths], recaster, Path(out), config, on_verdict=on_verdict
    )


def _recaster(recast: str, model: str | None, hub: ModelHub | None) -> ChatModel | Recaster:
    if recast == "rules":
        if model is not None:
            raise CurationArgumentError(
                f"recast by rules takes no model; drop the model {model!r} or recast by model"
            )
        return RuleRecaster()
    if recast != "model":
        raise CurationArgumentError(f"unknown recast {recast!r}; use one of {', '.join(RECASTERS)}")
    if model is None or hub is None:
        raise CurationArgumentError(
            "recast by model needs a model and its hub; or recast by rules, offline"
        )
    return hub.model(model, "curator")


def rule_scenarios(seed_file: str | os.PathLike[str]) -> list[Scenario]:
    """The scenario the rules make of each seed in one seed file, unfiltered and unsaved:
    a preview of `recast="rules"`. A seed the rules cannot use raises its reason."""
    return [rule_recast(seed) for seed in read_seed_file(Path(seed_file))]


def impasse_table(
    ids: Sequence[str] = (),
    *,
    disclosure: str = "negotiator",
    keep_if_unresolved: int = 2,
) -> list[dict[str, Any]]:
    """The impasse filter's figures for built-in multi-issue scenarios (`ids`, default
    every one), one row each in domain order: the zone of possible agreement (packages
    every party accepts above its fallback, of all packages), the three unmediated
    rule-party replays' outcomes, how many did not resolve, and the verdict (`kept`, or
    why not). `disclosure` is what the rule parties state: `negotiator` (the default of
    every run) or `full`. CatalogError for an unknown id, a scenario without topics or an
    unknown disclosure."""
    if disclosure not in DISCLOSURES:
        raise CatalogError(f"unknown disclosure {disclosure!r}; use negotiator or full")
    chosen = _multi_issue(ids)
    config = CurationConfig(
        min_unresolved=keep_if_unresolved,
        disclosure="full" if disclosure == "full" else "negotiator",
    )
    return [_impasse_row(s, asyncio.run(impasse_filter(s, config))) for s in chosen]


def _multi_issue(ids: Sequence[str]) -> list[Scenario]:
    library = builtin_scenarios()
    unknown = [i for i in ids if i not in library]
    if unknown:
        raise CatalogError(f"no built-in scenario {unknown[0]!r}; see `disputelab scenarios list`")
    flat = [i for i in ids if not library[i].topics]
    if flat:
        raise CatalogError(f"{flat[0]!r} has no topics; the impasse filter needs topics")
    chosen = [library[i] for i in ids] if ids else [s for s in library.values() if s.topics]
    order = {d: k for k, d in enumerate(SOCRATES_DOMAINS)}
    return sorted(chosen, key=lambda s: (order.get(s.domain, len(order)), s.domain, s.id))


def _impasse_row(s: Scenario, verdict: FilterVerdict) -> dict[str, Any]:
    zone, packages = agreement_zone(s)
    unresolved = sum(o != "resolved" for o in verdict.outcomes)
    return {
        "id": s.id,
        "domain": s.domain,
        "parties": len(s.parties),
        "topics": len(s.topics),
        "zone": f"{zone}/{packages}",
        "replays": " ".join(verdict.outcomes),
        "unresolved": f"{unresolved}/{len(verdict.outcomes)}",
        "verdict": "kept" if verdict.reason is None else verdict.reason,
    }
