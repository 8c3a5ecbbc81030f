"""Scenario curation (SoCRATES §3.2): seeds in, hard scenarios out.

Entry point: `await curate(sources, model, out_dir, config)`; see `pipeline.curate`.
"""

from disputelab.curation.pipeline import (
    REJECTED_LOG,
    Accepted,
    CurationConfig,
    CurationResult,
    FilterVerdict,
    Rejected,
    Verdict,
    agreement_zone,
    curate,
    impasse_filter,
)
from disputelab.curation.recast import Draft, RecastFailed, RecastSettings, recast, to_scenario
from disputelab.curation.sources import (
    DOMAINS,
    FileSeedSource,
    SearchSeedSource,
    Seed,
    SeedError,
    SeedSearcher,
    SeedSource,
    read_seed_file,
)

__all__ = [
    "DOMAINS",
    "REJECTED_LOG",
    "Accepted",
    "CurationConfig",
    "CurationResult",
    "Draft",
    "FileSeedSource",
    "FilterVerdict",
    "RecastFailed",
    "RecastSettings",
    "Rejected",
    "SearchSeedSource",
    "Seed",
    "SeedError",
    "SeedSearcher",
    "SeedSource",
    "Verdict",
    "agreement_zone",
    "curate",
    "impasse_filter",
    "read_seed_file",
    "recast",
    "to_scenario",
]
