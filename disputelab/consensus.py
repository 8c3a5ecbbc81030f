"""How much the parties agree on a topic, given each party's stance.

One definition serves three readers: the oracle (fed the rule parties' true hidden
stances), the self-report tracker (fed the stances parties state) and the rule mediator
(fed the public stances it has seen). Keeping it in one pure function is what lets a test
assert that self-report equals the oracle for truthful rule parties.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from disputelab.episode import Stance


def _share_agreeing(counts: Counter[str], n: int) -> float:
    """Largest bloc behind one option, rescaled so 'everyone apart' is 0 and 'all' is 1."""
    if n < 2 or not counts:
        return 0.0
    best = max(counts.values())
    return max(0.0, (best - 1) / (n - 1))


def topic_consensus(stances: Sequence[Stance | None]) -> float:
    """Consensus on one topic in [0, 1].

    Half of it is the largest bloc of parties that would all *accept* one option, half the
    largest bloc that *backs* the same option. For two parties this gives 0, 0.5 or 1; for
    three, five levels, mirroring a 1-5 judge rubric. A party with no stance (None, or no
    option) counts as agreeing with nobody, which is the conservative reading.
    """
    n = len(stances)
    if n == 0:
        return 0.0
    accept: Counter[str] = Counter()
    back: Counter[str] = Counter()
    for s in stances:
        if s is None:
            continue
        accept.update(set(s.acceptable) | ({s.option} if s.option else set()))
        if s.option:
            back[s.option] += 1
    return 0.5 * _share_agreeing(accept, n) + 0.5 * _share_agreeing(back, n)


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
