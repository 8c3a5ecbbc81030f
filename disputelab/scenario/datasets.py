"""The public datasets disputelab reads, fetched with git into a user cache on request.

Nothing is bundled: `fetch` clones a dataset's public repository (or a mirror given with
`source`), then lays its case files out where the importers expect them, with the licence
and citation beside them. Experiment specs name a fetched dataset by format alone
(`agentmediation:`, `promediate:`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from disputelab import atomic
from disputelab.errors import DisputelabError
from disputelab.scenario.inputs import UserFileError, make_user_dir


class DatasetError(DisputelabError, ValueError):
    """A dataset that cannot be fetched or found; the message says what to do."""


@dataclass(frozen=True)
class Dataset:
    name: str
    description: str
    url: str
    files: tuple[tuple[str, str | None], ...]  # (glob in the repository, name to give it)
    cases: str  # glob of the case files in the laid-out folder
    licence: str
    citation: str


DATASETS = {
    d.name: d
    for d in (
        Dataset(
            "agentmediation",
            "Chinese civil-dispute cases with parties, points of contention, legal bases "
            "and facts (AgentMediation; the public repository holds more than 300)",
            "https://github.com/cjj826/AgentMediation.git",
            (("data/case_back.json", "cases.jsonl"), ("data/data_resource.json", "raw.jsonl")),
            "cases.jsonl",
            "none stated: the repository carries no licence file; use for research only",
            "Chen et al., Simulating Dispute Mediation with LLM-Based Agents for Legal "
            "Research (AgentMediation)",
        ),
        Dataset(
            "promediate",
            "six multi-party, multi-issue negotiation cases (ProMediate)",
            "https://github.com/microsoft/ProMediate-Eval.git",
            (
                ("cases/*.json", None),
                ("thoughtful_agents/prompts/topics.json", "topics.json"),
                ("LICENSE", None),
            ),
            "*.json",
            "MIT (see LICENSE beside the cases)",
            "Liu et al., ProMediate: A Socio-cognitive framework for evaluating proactive "
            "agents in multi-party negotiation (arXiv:2510.25224)",
        ),
    )
}


def data_root() -> Path:
    """Where datasets are kept: $DISPUTELAB_DATA, else the user's cache directory."""
    if os.environ.get("DISPUTELAB_DATA"):
        return Path(os.environ["DISPUTELAB_DATA"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "disputelab" / "datasets"


def get_dataset(name: str) -> Dataset:
    if name not in DATASETS:
        raise DatasetError(f"unknown dataset {name!r}; available: {', '.join(DATASETS)}")
    return DATASETS[name]


def folder(name: str, root: Path | None = None) -> Path:
    return (root or data_root()) / name


def case_files(name: str, root: Path | None = None) -> list[Path]:
    """The fetched case files of `name`; an error that says how to fetch them if absent."""
    d = get_dataset(name)
    found = sorted(p for p in folder(name, root).glob(d.cases) if p.name != "topics.json")
    if not found:
        raise DatasetError(
            f"dataset {name} is not fetched yet; fetch it (`disputelab datasets get {name}`, "
            f"or `fetch_dataset({name!r})` from Python), or name a file: {name}:PATH"
        )
    return found


def _is_repository(folder: Path) -> bool:
    """A clone (with .git) or a bare repository (a mirror: HEAD and objects/ at its top)."""
    return (folder / ".git").exists() or (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir()
    )


def fetch(name: str, source: str | None = None, root: Path | None = None) -> Path:
    """Clone the dataset's repository (or `source`) and lay out its case files; returns the
    folder that holds them."""
    d = get_dataset(name)
    if source is not None and Path(source).is_dir() and not _is_repository(Path(source)):
        raise DatasetError(
            f"{source} is a folder but not a git clone: a dataset is fetched from a "
            f"repository (a URL or a local clone); name a folder of case files directly "
            f"instead ({name}:{source} in a spec, or `disputelab scenarios import --from {name} "
            f"{source}` on the command line)"
        )
    target = folder(name, root)
    repo = target / "repository"
    # Clone beside the old copy and swap only on success: a failed fetch keeps what was there.
    fresh = target / "repository.new"
    if fresh.exists():
        shutil.rmtree(fresh)
    try:
        make_user_dir(target)
    except UserFileError as exc:
        raise DatasetError(
            f"{exc.path}: {exc}; set $DISPUTELAB_DATA or give `to` for another folder"
        ) from None
    url = source or d.url
    try:
        done = subprocess.run(
            ["git", "clone", "--quiet", "--depth", "1", url, str(fresh)],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DatasetError(f"cannot fetch {name} from {url}: {exc}") from None
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["git failed"])[-1]
        raise DatasetError(
            f"cannot fetch {name} from {url} ({why}); check the network, or give `source` "
            "(a mirror or a local clone)"
        )
    if repo.exists():
        shutil.rmtree(repo)
    fresh.rename(repo)
    for pattern, rename in d.files:
        matches = sorted(repo.glob(pattern))
        if not matches and rename is not None:
            raise DatasetError(f"{url} has no {pattern}: is it the {name} repository?")
        for src in matches:
            atomic.write_bytes(target / (rename or src.name), src.read_bytes())
    return target
