"""Score an episode with the SoCRATES metrics on the oracle consensus trajectory, and its
mediator's intervention behaviour (SoCRATES Table 7 and Figure 4's progress bins)."""

from __future__ import annotations

import math

from disputelab.consensus import consensus_score
from disputelab.episode import Episode, Status
from disputelab.evaluation.metrics import (
    MetricResult,
    consensus_gain,
    intervention_effectiveness,
    intervention_timeliness,
)

EVALUATOR = "socrates-oracle"
VERSION = "1"
# Fifths of the conversation, for where interventions fall (Figure 4's progress axis).
TIMING_BINS = 5


def intervention_behaviour(episode: Episode) -> dict[str, MetricResult]:
    """IF: the share of party turns after which the mediator spoke (%); FI: where its
    first utterance fell, as a % of the party turns; and the share of interventions in
    each fifth of the conversation (`interventions_q1` ... `_q5`, %)."""
    positions = episode.intervention_positions()
    turns = episode.party_turns
    if turns == 0:
        why = _nan("no party turns")
        return {"intervention_frequency": why, "first_intervention": why}
    out = {
        "intervention_frequency": MetricResult(
            100 * len(positions) / turns,
            f"{len(positions)} intervention(s) over {turns} party turns",
        )
    }
    if not positions:
        out["first_intervention"] = _nan("the mediator never spoke")
        return out
    out["first_intervention"] = MetricResult(
        100 * positions[0] / turns, f"first intervention after party turn {positions[0]} of {turns}"
    )
    counts = [0] * TIMING_BINS
    for k in positions:
        counts[min(TIMING_BINS - 1, TIMING_BINS * k // turns)] += 1
    for i, c in enumerate(counts):
        low, high = 100 * i // TIMING_BINS, 100 * (i + 1) // TIMING_BINS
        out[f"interventions_q{i + 1}"] = MetricResult(
            100 * c / len(positions), f"{c} of {len(positions)} interventions at {low}-{high}%"
        )
    return out


def oracle_trajectory(episode: Episode) -> list[float] | None:
    """S<=t per party turn (index 0 = before anyone spoke), or None without an oracle.

    Mediator turns do not move the oracle (hidden states change only when a party acts),
    so the value after party turn t is the one recorded on that party's turn.
    """
    if episode.initial_consensus is None:
        return None
    traj = [consensus_score(episode.initial_consensus)]
    append = traj.append
    for turn in episode.turns:
        if turn.role != "party":
            continue
        by_topic = turn.consensus
        if by_topic is None:
            return None
        # `consensus_score` written out: this loop runs over every party turn of every
        # episode scored.
        append(sum(by_topic.values()) / len(by_topic) if by_topic else 0.0)
    return traj


def _nan(reason: str) -> MetricResult:
    return MetricResult(math.nan, f"undefined: {reason}")


def score_episode(episode: Episode, baseline: Episode | None) -> dict[str, MetricResult]:
    """Final consensus, resolution, and (for a mediated episode) CG, IT and IE.

    Consensus gain compares terminal scores with the matched unmediated `baseline`; it is
    NaN with a reason when there is no baseline or either side has no oracle.
    """
    traj = oracle_trajectory(episode)
    out: dict[str, MetricResult] = {}
    status = episode.outcome.status if episode.outcome else Status.INCOMPLETE
    out["resolved"] = MetricResult(
        1.0 if status is Status.RESOLVED else 0.0, f"episode ended with status {status.value}"
    )
    out["party_turns"] = MetricResult(float(episode.party_turns), "party turns taken")
    mediated = any(a for role, a in episode.agents.items() if role == "mediator" and a != "none")
    positions = episode.intervention_positions()
    if mediated:  # what the mediator did, whatever the consensus source
        out["interventions"] = MetricResult(float(len(positions)), "mediator turns in the dialogue")
        out |= intervention_behaviour(episode)
    if traj is None:
        out["final_consensus"] = _nan("no oracle: some party has no known hidden state")
        return out
    out["final_consensus"] = MetricResult(
        traj[-1], f"oracle Consensus Score after party turn {len(traj) - 1}"
    )
    if not mediated:
        return out
    base_traj = oracle_trajectory(baseline) if baseline is not None else None
    if baseline is None:
        out["consensus_gain"] = _nan("no matched unmediated episode")
    elif base_traj is None:
        out["consensus_gain"] = _nan("the matched unmediated episode has no oracle")
    else:
        out["consensus_gain"] = consensus_gain(traj[-1], base_traj[-1])
    out["intervention_timeliness"] = intervention_timeliness(traj, positions)
    out["intervention_effectiveness"] = intervention_effectiveness(traj, positions)
    return out
