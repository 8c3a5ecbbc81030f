"""Where exemplar pools and saved sets are found.

A reference is a path to a JSON file, `builtin` (the offline pool shipped with the
package, made by `disputelab exemplars pool --model rule`), or a name saved under the
exemplar folder of the store: `<store>/exemplars/NAME.json`. The store is the one named by
DISPUTELAB_STORE, else `./disputelab-runs`; DISPUTELAB_EXEMPLARS names another folder.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path

from disputelab.protocols.bilateral.agents.exemplars import ExemplarFile, load_exemplars

BUILTIN = "builtin"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,79}$")


def exemplar_dir(store: Path | None = None) -> Path:
    """The folder of saved pools and sets: under `store` when given, else as the module
    docstring says."""
    if store is not None:
        return store / "exemplars"
    if os.environ.get("DISPUTELAB_EXEMPLARS"):
        return Path(os.environ["DISPUTELAB_EXEMPLARS"])
    return Path(os.environ.get("DISPUTELAB_STORE") or "disputelab-runs") / "exemplars"


def builtin_pool_path() -> Path:
    return Path(
        str(resources.files("disputelab.protocols.bilateral.agents") / "data" / "pool-builtin.json")
    )


def resolve(ref: str, store: Path | None = None) -> ExemplarFile:
    """The pool or set `ref` names; ValueError with one line when there is none."""
    if ref == BUILTIN:
        return load_exemplars(builtin_pool_path())
    path = Path(ref)
    if ref.endswith(".json") and path.is_file():
        return load_exemplars(path)
    if not NAME.match(ref):
        raise ValueError(f"exemplars {ref[:80]!r}: not a saved name, nor a .json file that exists")
    folder = exemplar_dir(store)
    candidate = folder / f"{ref}.json"
    if not candidate.is_file():
        saved = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
        listed = ", ".join(saved[:12]) or "none"
        raise ValueError(
            f"no exemplars named {ref!r} in {folder} (saved there: {listed}); "
            "give a .json path, or save one with `disputelab exemplars select` (a set) or "
            "`disputelab exemplars pool` (a pool)"
        )
    return load_exemplars(candidate)
