"""Where the tests find the public datasets: one setting, three places.

1. `$DISPUTELAB_DATA`, the folder `disputelab datasets get` fetches into when it is set
   (set it, and only it is looked at: a run against a clone of the public repository then
   never falls back to another copy);
2. else the user cache `disputelab datasets get` fills by default;
3. else `../shared/datasets` beside this clone, the development copy.

A test that needs a dataset says so with `@pytest.mark.data("agentmediation")` (or
"promediate"); the root conftest skips it, naming the command that enables it, where the
dataset is in none of these places, and lists such skips at the end of the run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from disputelab.scenario.datasets import DATASETS as KNOWN
from disputelab.scenario.datasets import data_root

CLONE = Path(__file__).resolve().parents[1]
BESIDE_CLONE = CLONE.parent / "shared" / "datasets"
# A file each fetched dataset's folder holds, to tell a fetched folder from an empty one.
HALLMARK = {"agentmediation": "cases.jsonl", "promediate": "hmo.json"}
ENABLE = (
    "`disputelab datasets get agentmediation` and `disputelab datasets get promediate` "
    "(or set DISPUTELAB_DATA to a folder that holds them)"
)
SKIP_PREFIX = "needs the public dataset"


def data_roots() -> list[Path]:
    """The places looked in, in order (only $DISPUTELAB_DATA when it is set)."""
    if os.environ.get("DISPUTELAB_DATA"):
        return [Path(os.environ["DISPUTELAB_DATA"])]
    return [data_root(), BESIDE_CLONE]


def dataset_folder(name: str) -> Path | None:
    """The first place holding a fetched copy of dataset `name`, or None."""
    if name not in HALLMARK or name not in KNOWN:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(HALLMARK)}")
    for root in data_roots():
        if (root / name / HALLMARK[name]).is_file():
            return root / name
    return None


def skip_reason(missing: list[str]) -> str:
    fetch = " and ".join(f"`disputelab datasets get {name}`" for name in missing)
    return (
        f"{SKIP_PREFIX} {', '.join(missing)}; run {fetch} "
        "(or set DISPUTELAB_DATA to a folder that holds it)"
    )


def expected_folder(name: str) -> Path:
    """Where dataset `name` is, or else where the first place would hold it."""
    return dataset_folder(name) or data_roots()[0] / name


def agentmediation_records(cases: Path) -> list[dict[str, object]]:
    """The records a fetched AgentMediation case file holds, read as plain JSON lines: the
    count and titles tests compare the importer against."""
    lines = cases.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]
