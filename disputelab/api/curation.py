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

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from disputelab.curation import (
    Accepted,
    CurationConfig,
    CurationResult,
    Recaster,
    Rejected,
    RuleRecaster,
    Verdict,
    read_seed_file,
    rule_recast,
)
from disputelab.curation import curate as run_curation
from disputelab.errors import DisputelabError

if TYPE_CHECKING:
    from disputelab.llm.base import ChatModel
    from disputelab.llm.models import ModelHub
    from disputelab.scenario.schema import Scenario

__all__ = [
    "RECASTERS",
    "Accepted",
    "CurationResult",
    "Rejected",
    "Verdict",
    "curate_async",
    "rule_scenarios",
]

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
