"""The expertise condition's retrieval step: legal bases found for each case before the
mediator proposes.

The corpus is a user's statute file when one is given; otherwise it is built from the
legal bases of the cases at hand, and a case's own bases are never retrieved for it
(leave-one-out), so retrieval cannot simply hand the mediator the answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from disputelab.scenario.schema import Scenario

if TYPE_CHECKING:
    from disputelab.legal.retrieval import StatuteIndex


class ExpertiseError(ValueError):
    """The expertise condition cannot be served: no corpus, or a bad one."""


def build_index(corpus: Path | None, cases: Iterable[Scenario]) -> StatuteIndex:
    """A statute index from `corpus`, else from the legal bases of `cases`."""
    from disputelab.legal.retrieval import StatuteIndex

    if corpus is not None:
        return StatuteIndex.from_file(corpus)
    legal = [c for c in cases if c.legal is not None and c.legal.legal_bases]
    if not legal:
        raise ExpertiseError(
            "the expertise condition needs a statute corpus: pass a corpus file, or run it on "
            "imported legal cases (their legal bases become the corpus)"
        )
    return StatuteIndex.from_cases(legal)


def retrieve_for(index: StatuteIndex, scenario: Scenario) -> tuple[str, ...]:
    """The top-k bases for `scenario`, k from its expertise condition (0: none)."""
    from disputelab.legal.retrieval import case_key, case_query

    k = scenario.legal.retrieval_top_k if scenario.legal is not None else 0
    if k <= 0:
        return ()
    found = index.retrieve(case_query(scenario), k, exclude_case=case_key(scenario))
    if not found:
        raise ExpertiseError(
            f"{scenario.id}: the statute corpus has nothing to retrieve for this case (its "
            "own legal bases are left out); pass a corpus file or add more cases beside it"
        )
    return tuple(found)


def retrieved_bases(
    corpus: Path | None,
    scenarios: Mapping[str, Scenario],
    conditioned: Mapping[tuple[str, str], Scenario],
) -> dict[tuple[str, str], tuple[str, ...]]:
    """Bases per (scenario, condition) cell, from `corpus` or else from the legal bases of
    `scenarios`; the index is built only when some cell asks."""
    wanted = {
        key: s for key, s in conditioned.items() if s.legal is not None and s.legal.retrieval_top_k
    }
    if not wanted:
        return {}
    index = build_index(corpus, scenarios.values())
    return {key: retrieve_for(index, s) for key, s in wanted.items()}
