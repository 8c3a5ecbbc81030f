"""Direction tests over many seeds: the rule world moves the way negotiation research says."""

from __future__ import annotations

import statistics

from disputelab.episode import Status
from disputelab.evaluation.metrics import consensus_gain
from disputelab.evaluation.socrates import oracle_trajectory
from tests.helpers import play, scenario, with_personas

SCENARIOS = ["tenancy", "workplace", "community-centre"]
SEEDS = range(50)


def _outcomes(strategy: str) -> tuple[float, float]:
    resolved, finals = [], []
    for sid in SCENARIOS:
        s = with_personas(scenario(sid), strategy)  # type: ignore[arg-type]
        for seed in SEEDS:
            ep = play(s, "none", seed)
            assert ep.outcome is not None
            resolved.append(ep.outcome.status is Status.RESOLVED)
            traj = oracle_trajectory(ep)
            assert traj is not None
            finals.append(traj[-1])
    return statistics.mean(resolved), statistics.mean(finals)


def test_all_competing_parties_resolve_less_and_agree_less_than_all_accommodating() -> None:
    comp_rate, comp_final = _outcomes("competing")
    acc_rate, acc_final = _outcomes("accommodating")
    assert comp_rate < acc_rate
    assert comp_final < acc_final


def test_the_rule_mediators_mean_consensus_gain_is_positive() -> None:
    gains = []
    for sid in SCENARIOS:
        for seed in SEEDS:
            med = oracle_trajectory(play(scenario(sid), "rule", seed))
            base = oracle_trajectory(play(scenario(sid), "none", seed))
            assert med is not None and base is not None
            gains.append(consensus_gain(med[-1], base[-1]).value)
    assert statistics.mean(gains) > 0
