"""Scenario curation (SoCRATES §3.2): seeds in, hard scenarios out.

Entry point: `await curate(sources, model_or_recaster, out_dir, config)`; see
`pipeline.curate`. `RuleRecaster()` recasts offline, by rules and our template library.
"""

from disputelab.curation.pipeline import (
    REJECTED_LOG,
    Accepted,
    CurationConfig,
    CurationResult,
    FilterVerdict,
    ModelRecaster,
    Recaster,
    Rejected,
    Verdict,
    agreement_zone,
    curate,
    impasse_filter,
)
from disputelab.curation.recast import Draft, RecastFailed, RecastSettings, recast, to_scenario
from disputelab.curation.rules import RuleRecaster, rule_recast
from disputelab.curation.sources import (
    DOMAINS,
    FileSeedSource,
    Seed,
    SeedError,
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
    "ModelRecaster",
    "RecastFailed",
    "RecastSettings",
    "Recaster",
    "Rejected",
    "RuleRecaster",
    "Seed",
    "SeedError",
    "SeedSource",
    "Verdict",
    "agreement_zone",
    "curate",
    "impasse_filter",
    "read_seed_file",
    "recast",
    "rule_recast",
    "to_scenario",
]
