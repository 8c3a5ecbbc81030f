"""How much the parties agree on a topic, given each party's stance.

One definition serves three readers: the oracle (fed the rule parties' true hidden
stances), the self-report tracker (fed the stances parties state) and the rule mediator
(fed the public stances it has seen). Keeping it in one pure function is what lets a test
assert that self-report equals the oracle for truthful rule parties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from disputelab.episode import Stance


def topic_consensus(stances: Sequence[Stance | None]) -> float:
    """Consensus on one topic in [0, 1] (see `_topic_consensus`); memoised, as the same
    tables of stances recur across turns and episodes."""
    return _topic_consensus(tuple(stances))


@lru_cache(maxsize=1 << 16)
def _topic_consensus(stances: tuple[Stance | None, ...]) -> float:
    """Consensus on one topic in [0, 1].

    Half of it is the largest bloc of parties that would all *accept* one option, half the
    largest bloc that *backs* the same option, each rescaled so that "everyone apart" is 0
    and "everyone together" is 1. For two parties this gives 0, 0.5 or 1; for three, five
    levels, mirroring a 1-5 judge rubric. A party with no stance (None, or no option and
    nothing acceptable) counts as agreeing with nobody, which is the conservative reading.
    Stances list each acceptable option once (their constructors make sure of it).
    """
    n = len(stances)
    if n < 2:
        return 0.0
    accept: dict[str, int] = {}
    back: dict[str, int] = {}
    for s in stances:
        if s is None:
            continue
        option, acceptable = s
        if option is not None:
            back[option] = back.get(option, 0) + 1
            if option not in acceptable:
                accept[option] = accept.get(option, 0) + 1
        for o in acceptable:
            accept[o] = accept.get(o, 0) + 1
    accept_share = (max(accept.values()) - 1) / (n - 1) if accept else 0.0
    back_share = (max(back.values()) - 1) / (n - 1) if back else 0.0
    return 0.5 * accept_share + 0.5 * back_share


def consensus_by_topic(
    topic_ids: Sequence[str], stances_by_party: Sequence[Mapping[str, Stance | None]]
) -> dict[str, float]:
    """Per-topic consensus across parties."""
    return {t: topic_consensus([party.get(t) for party in stances_by_party]) for t in topic_ids}


def consensus_score(by_topic: Mapping[str, float]) -> float:
    """The SoCRATES Consensus Score: the unweighted mean over topics."""
    if not by_topic:
        return 0.0
    return sum(by_topic.values()) / len(by_topic)
