"""Curation (SoCRATES section 3.2): recast seed texts into scenarios with a model and
keep the ones that reach impasse unmediated.

    from disputelab.api import curation, open_models

    hub = open_models(["local"])
    result = await curation.curate_async(["seeds/"], model="local", hub=hub, out="curated")
    print(len(result.accepted), "kept;", result.rejected_log)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from disputelab.curation import Accepted, CurationConfig, CurationResult, Rejected, Verdict
from disputelab.curation import curate as run_curation

if TYPE_CHECKING:
    from disputelab.llm.models import ModelHub

__all__ = ["Accepted", "CurationResult", "Rejected", "Verdict", "curate_async"]


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
