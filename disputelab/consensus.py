"""How much the parties agree on a topic, given each party's stance.

One definition serves three readers: the oracle (fed the rule parties' true hidden
stances), the self-report tracker (fed the stances parties state) and the rule mediator
(fed the public stances it has seen). Keeping it in one pure function is what lets a test
assert that self-report equals the oracle for truthful rule parties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from disputelab.episode import Stance


def _share_agreeing(counts: dict[str, int], n: int) -> float:
    """Largest bloc behind one option, rescaled so 'everyone apart' is 0 and 'all' is 1."""
    if n < 2 or not counts:
        return 0.0
    return max(0.0, (max(counts.values()) - 1) / (n - 1))


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
    accept: dict[str, int] = {}
    back: dict[str, int] = {}
    for s in stances:
        if s is None:
            continue
        options = s.acceptable
        if s.option is not None:
            back[s.option] = back.get(s.option, 0) + 1
            if s.option not in options:
                options = (*options, s.option)
        # A stance may list an option twice (LLM output); count each party once.
        for o in options if len(set(options)) == len(options) else set(options):
            accept[o] = accept.get(o, 0) + 1
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
