"""The expertise condition's retrieval step: legal bases found for each case before the
mediator proposes.

Two retrievers. `expertise:stored-topK` takes the first K entries of the case's stored
retrieval list (AgentMediation's retrieve_articles, the list the paper's "w/ EK" setting
draws from), in canonical form. `expertise:ek-topK` ranks with BM25 over a corpus: a
user's statute file when one is given; otherwise the legal bases of the cases at hand,
where a case's own bases are never retrieved for it (leave-one-out), so retrieval cannot
simply hand the mediator the answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from disputelab.errors import DisputelabError
from disputelab.scenario.schema import Scenario

if TYPE_CHECKING:
    from disputelab.legal.retrieval import StatuteIndex


class ExpertiseError(DisputelabError, ValueError):
    """The expertise condition cannot be served: no corpus, or a bad one."""


def build_index(corpus: Path | None, cases: Iterable[Scenario]) -> StatuteIndex:
    """A statute index from `corpus`, else from the legal bases of `cases`."""
    from disputelab.legal.retrieval import StatuteIndex

    if corpus is not None:
        return StatuteIndex.from_file(corpus)
    legal = [c for c in cases if c.legal is not None and c.legal.legal_bases]
    if not legal:
        raise ExpertiseError(
            "the expertise condition needs a statute corpus: pass a corpus file (--corpus, or "
            "corpus: in an experiment spec), or run it on imported legal cases (their legal "
            "bases become the corpus)"
        )
    return StatuteIndex.from_cases(legal)


def stored_top_k(scenario: Scenario) -> tuple[str, ...] | None:
    """The first k entries of the case's stored retrieval list, k from its expertise
    condition, in canonical form and without repeats; None when the case has no stored
    list (BM25 retrieves instead). As in the paper's code, k counts the entries as stored,
    so a repeated article leaves fewer than k distinct ones."""
    from disputelab.legal.citations import normalize_legal_basis

    legal = scenario.legal
    if legal is None or legal.stored_retrieval is None:
        return None
    top = legal.stored_retrieval[: legal.retrieval_top_k]
    return tuple(dict.fromkeys(b for b in map(normalize_legal_basis, top) if b))


def _wants(scenario: Scenario) -> bool:
    return scenario.legal is not None and scenario.legal.retrieval_top_k > 0


def retrieve_for(index: StatuteIndex | None, scenario: Scenario) -> tuple[str, ...]:
    """The top-k bases for `scenario`, k from its expertise condition (0: none): from its
    stored retrieval list when it has one, else from `index` (BM25)."""
    from disputelab.legal.retrieval import case_key, case_query

    if not _wants(scenario):
        return ()
    stored = stored_top_k(scenario)
    if stored is not None:
        return stored
    if index is None:
        raise ExpertiseError(f"{scenario.id}: BM25 retrieval needs a statute index")
    k = scenario.legal.retrieval_top_k if scenario.legal is not None else 0
    found = index.retrieve(case_query(scenario), k, exclude_case=case_key(scenario))
    if not found:
        raise ExpertiseError(
            f"{scenario.id}: the statute corpus has nothing to retrieve for this case (its "
            "own legal bases are left out); pass a corpus file (--corpus, or corpus: in an "
            "experiment spec) or add more cases beside it"
        )
    return tuple(found)


def bases_for(
    corpus: Path | None, cases: Iterable[Scenario], scenario: Scenario
) -> tuple[str, ...]:
    """The bases `scenario`'s mediator is handed; a BM25 index (from `corpus`, else from
    `cases`) is built only when the scenario asks BM25."""
    if not _wants(scenario) or stored_top_k(scenario) is not None:
        return retrieve_for(None, scenario)
    return retrieve_for(build_index(corpus, cases), scenario)


def retrieved_bases(
    corpus: Path | None,
    scenarios: Mapping[str, Scenario],
    conditioned: Mapping[tuple[str, str], Scenario],
) -> dict[tuple[str, str], tuple[str, ...]]:
    """Bases per (scenario, condition) cell: from the case's stored list for
    `expertise:stored-topK`, else BM25 over `corpus` or the legal bases of `scenarios`;
    the index is built only when some cell asks BM25."""
    wanted = {key: s for key, s in conditioned.items() if _wants(s)}
    bm25 = any(stored_top_k(s) is None for s in wanted.values())
    index = build_index(corpus, scenarios.values()) if bm25 else None
    return {key: retrieve_for(index, s) for key, s in wanted.items()}
