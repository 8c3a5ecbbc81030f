"""Score an episode with the SoCRATES metrics on the oracle consensus trajectory."""

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


def oracle_trajectory(episode: Episode) -> list[float] | None:
    """S<=t per party turn (index 0 = before anyone spoke), or None without an oracle.

    Mediator turns do not move the oracle (hidden states change only when a party acts),
    so the value after party turn t is the one recorded on that party's turn.
    """
    if episode.initial_consensus is None:
        return None
    traj = [consensus_score(episode.initial_consensus)]
    for turn in episode.turns:
        if turn.role != "party":
            continue
        if turn.consensus is None:
            return None
        traj.append(consensus_score(turn.consensus))
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
    if traj is None:
        out["final_consensus"] = _nan("no oracle: some party has no known hidden state")
        return out
    out["final_consensus"] = MetricResult(
        traj[-1], f"oracle Consensus Score after party turn {len(traj) - 1}"
    )
    mediated = any(a for role, a in episode.agents.items() if role == "mediator" and a != "none")
    if not mediated:
        return out
    positions = episode.intervention_positions()
    out["interventions"] = MetricResult(float(len(positions)), "mediator turns in the dialogue")
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
