"""Who held the floor: speaking shares, their inequality, interruptions and motivation.

These measure the shape of a conversation, so that claims like "the social mediator
draws in silent parties" can be tested: the quietest party's share should rise, and the
Gini coefficient of the shares fall. Under cyclic turn-taking the shares are equal by
construction (up to an early stop), so only motivated episodes carry information here;
interruptions and spoken motivation exist only for them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from disputelab.episode import Episode
from disputelab.evaluation.metrics import MetricResult

VERSION = "1"


def gini(counts: Sequence[float]) -> float:
    """The Gini coefficient of non-negative `counts`: 0 when all are equal, (n-1)/n when
    one holds everything; NaN for an empty list or an all-zero one."""
    n = len(counts)
    total = float(sum(counts))
    if n == 0 or total <= 0:
        return math.nan
    xs = sorted(counts)
    # G = sum_i (2i - n - 1) x_i / (n * total), with i = 1..n over the sorted values.
    return sum((2 * i - n - 1) * x for i, x in enumerate(xs, start=1)) / (n * total)


def speaking_counts(episode: Episode, parties: Sequence[str]) -> dict[str, int]:
    """Party turns per party, every party listed (silent ones with 0)."""
    spoken = Counter(t.speaker for t in episode.turns if t.role == "party")
    return {pid: spoken.get(pid, 0) for pid in parties}


def turn_taking_scores(episode: Episode, parties: Sequence[str]) -> dict[str, MetricResult]:
    counts = speaking_counts(episode, parties)
    total = sum(counts.values())
    if total == 0:
        why = "undefined: no party spoke"
        return {
            "speaking_gini": MetricResult(math.nan, why),
            "quietest_share": MetricResult(math.nan, why),
        }
    shares = {pid: c / total for pid, c in counts.items()}
    quiet = min(shares, key=lambda p: shares[p])
    out = {
        "speaking_gini": MetricResult(
            gini(list(counts.values())),
            f"Gini coefficient of {len(counts)} parties' shares of {total} party turns",
            {"shares": shares},
        ),
        "quietest_share": MetricResult(
            shares[quiet], f"{quiet} spoke least: {counts[quiet]} of {total} party turns"
        ),
    }
    choices = [t.choice for t in episode.turns if t.choice is not None]
    if choices:
        interrupted = sum(1 for c in choices if c.interrupted)
        out["interruptions"] = MetricResult(
            float(interrupted),
            f"{interrupted} of {len(choices)} turns taken from the predicted speaker",
        )
        rated = [c.motivation for c in choices if not math.isnan(c.motivation)]
        out["spoken_motivation"] = (
            MetricResult(
                sum(rated) / len(rated),
                f"mean motivation (1-5, after the silence boost) of {len(rated)} voiced thoughts",
            )
            if rated
            else MetricResult(math.nan, "undefined: no voiced thought had a rating")
        )
    return out
