"""Curation (SoCRATES section 3.2): recast seed texts into scenarios with a model and
keep the ones that reach impasse unmediated.

    from disputelab.api import curation, open_models

    hub = open_models(["local"])
    result = await curation.curate_async(["seeds/"], model="local", hub=hub, out="curated")
    print(len(result.accepted), "kept;", result.rejected_log)
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from disputelab.api.catalog import CatalogError
from disputelab.curation import (
    Accepted,
    CurationConfig,
    CurationResult,
    FilterVerdict,
    Rejected,
    Verdict,
    agreement_zone,
    impasse_filter,
)
from disputelab.curation import curate as run_curation
from disputelab.scenario.library import builtin_scenarios
from disputelab.scenario.schema import SOCRATES_DOMAINS, Scenario

if TYPE_CHECKING:
    from disputelab.llm.models import ModelHub

__all__ = [
    "DISCLOSURES",
    "Accepted",
    "CurationResult",
    "Rejected",
    "Verdict",
    "curate_async",
    "impasse_table",
]

DISCLOSURES = ("negotiator", "full")


async def curate_async(
    paths: Sequence[str | os.PathLike[str]],
    *,
    model: str,
    hub: ModelHub,
    out: str | os.PathLike[str] = "curated",
    concurrency: int = 4,
    keep_if_unresolved: int = 2,
    on_verdict: Callable[[Verdict], None] | None = None,
) -> CurationResult:
    """Recast every seed of `paths` (seed files, .txt, .md or .jsonl, or folders of them)
    with `model` into a scenario, replay it unmediated three times, and keep it as YAML
    in `out` when at least `keep_if_unresolved` replays fail to resolve; every rejection
    goes to `out/rejected.jsonl`. `on_verdict` hears each Accepted or Rejected as it is
    decided."""
    config = CurationConfig(concurrency=concurrency, min_unresolved=keep_if_unresolved)
    curator = hub.model(model, "curator")
    return await run_curation(
        [Path(p) for p in paths], curator, Path(out), config, on_verdict=on_verdict
    )


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
