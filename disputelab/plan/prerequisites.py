"""What an experiment needs besides its spec, checked before anything runs (and by
`--dry-run`): the statute corpus it names, and whatever its protocol's parameters name,
such as the remediator's saved exemplar set. Model names are checked where the models
are opened."""

from __future__ import annotations

from pathlib import Path

from disputelab.plan.experiment import ExperimentPlan


def prerequisite_problems(plan: ExperimentPlan, store_dir: Path | None) -> list[str]:
    """One line per missing prerequisite of `plan` (and its ablations' grids)."""
    problems: list[str] = []
    corpus = plan.corpus
    if corpus is not None and not corpus.is_file():
        problems.append(f"corpus: no file {corpus}")
    mediators = list(plan.spec.mediators)
    problems += plan.protocol.resource_problems(plan.params, mediators, store_dir)
    return list(dict.fromkeys(problems))
