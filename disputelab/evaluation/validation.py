"""Judge validation against ground truth: rule-party episodes have a known consensus
(the oracle), so any tracker's trajectory can be scored against it without annotators."""

from __future__ import annotations

import math
from collections.abc import Sequence

from disputelab.evaluation.stats import pearson
from disputelab.evaluation.trackers import OracleFit, Trajectory


def compare(tracked: Sequence[Trajectory], truth: Sequence[Trajectory]) -> OracleFit:
    """Pearson r at trajectory level (all defined points pooled) and outcome level (final
    values), mean absolute error, and judge cost per episode."""
    xs: list[float] = []
    ys: list[float] = []
    finals_x: list[float] = []
    finals_y: list[float] = []
    for got, want in zip(tracked, truth, strict=True):
        g, w = got.overall(), want.overall()
        for a, b in zip(g, w, strict=False):
            if not (math.isnan(a) or math.isnan(b)):
                xs.append(a)
                ys.append(b)
        if g and w and not (math.isnan(g[-1]) or math.isnan(w[-1])):
            finals_x.append(g[-1])
            finals_y.append(w[-1])
    n = max(1, len(tracked))
    mae = sum(abs(a - b) for a, b in zip(xs, ys, strict=True)) / len(xs) if xs else math.nan
    return OracleFit(
        trajectory_r=pearson(xs, ys).statistic,
        outcome_r=pearson(finals_x, finals_y).statistic,
        mae=mae,
        points=len(xs),
        episodes=len(tracked),
        calls_per_episode=sum(t.calls for t in tracked) / n,
        tokens_per_episode=sum(t.input_tokens + t.output_tokens for t in tracked) / n,
        failures=[t.failure for t in tracked if t.failure],
    )
