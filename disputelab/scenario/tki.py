"""The Thomas-Kilmann plane: a party's strategy as a point (assertiveness, cooperativeness)
on two 0-10 scales, the five modes as named points on it, and the adaptive update.

AgentMediation (Chen et al., "Simulating Dispute Mediation with LLM-Based Agents for Legal
Research", AAAI 2026, https://arxiv.org/abs/2509.06586) places the five TKI modes on two
dimensions, assertiveness (how far a party pursues its own concerns) and cooperativeness
(how far it attends to the others'), at High, Moderate or Low levels; its released code
(https://github.com/cjj826/AgentMediation) sets them on 0-10 scales at the points below
and names a point's mode by thresholds at 7 and 3.

Everything here is pure: no agent, no table. The rule agents turn a point into behaviour
by weighting the behaviour table's per-mode parameters with `mode_weights` (see
`disputelab.agents.utility`), so at a mode's own point they play exactly that mode.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

SCALE = 10.0  # both dimensions run from 0 to 10

Point = tuple[float, float]  # (assertiveness, cooperativeness)

# The modes' points (assertiveness, cooperativeness): the paper's High / Moderate / Low
# levels as the authors' experiment scripts set them.
MODE_POINTS: dict[str, Point] = {
    "competing": (10.0, 0.0),  # H assertiveness, L cooperativeness
    "collaborating": (10.0, 10.0),  # H, H
    "compromising": (5.0, 5.0),  # M, M
    "avoiding": (0.0, 0.0),  # L, L
    "accommodating": (0.0, 10.0),  # L, H
}
HIGH, LOW = 7.0, 3.0  # the thresholds that name a point's mode
CENTRE = "compromising"
# The square's corners in order around it; each pair of neighbours spans a triangle with
# the centre, and a point is weighted by its barycentric coordinates in its triangle.
_RING = ("avoiding", "competing", "collaborating", "accommodating")


def check_point(assertiveness: float, cooperativeness: float) -> Point:
    """The point, or ValueError naming the scale when a coordinate is off it or not finite."""
    for name, v in (("assertiveness", assertiveness), ("cooperativeness", cooperativeness)):
        if not (math.isfinite(v) and 0.0 <= v <= SCALE):
            raise ValueError(f"{name} runs from 0 to {SCALE:g}, not {v!r}")
    return (float(assertiveness), float(cooperativeness))


def mode_of(point: Point) -> str:
    """The mode a point is named by: high (>= 7) or low (<= 3) on each scale picks a
    corner mode; anything else is compromising."""
    a, c = point
    if a >= HIGH and c <= LOW:
        return "competing"
    if a >= HIGH and c >= HIGH:
        return "collaborating"
    if a <= LOW and c <= LOW:
        return "avoiding"
    if a <= LOW and c >= HIGH:
        return "accommodating"
    return CENTRE


def mode_weights(point: Point) -> dict[str, float]:
    """How much of each mode a point is: barycentric weights in the triangle (centre and
    two neighbouring corners) that holds it. Non-negative, summing to 1, continuous in
    the point, and exactly 1 on a mode at that mode's own point."""
    a, c = point
    for name, (x, y) in MODE_POINTS.items():
        if (a, c) == (x, y):
            return {name: 1.0}
    cx, cy = MODE_POINTS[CENTRE]
    for i, first in enumerate(_RING):
        second = _RING[(i + 1) % len(_RING)]
        w = _barycentric((a, c), (cx, cy), MODE_POINTS[first], MODE_POINTS[second])
        if w is not None:
            out = {CENTRE: w[0], first: w[1], second: w[2]}
            return {k: v for k, v in out.items() if v > 0.0}
    raise ValueError(f"point {point!r} is off the 0-{SCALE:g} square")


def _barycentric(p: Point, a: Point, b: Point, c: Point) -> tuple[float, float, float] | None:
    """p's weights on triangle (a, b, c), or None when p lies outside it."""
    det = (b[1] - c[1]) * (a[0] - c[0]) + (c[0] - b[0]) * (a[1] - c[1])
    wa = ((b[1] - c[1]) * (p[0] - c[0]) + (c[0] - b[0]) * (p[1] - c[1])) / det
    wb = ((c[1] - a[1]) * (p[0] - c[0]) + (a[0] - c[0]) * (p[1] - c[1])) / det
    wc = 1.0 - wa - wb
    eps = 1e-12
    if min(wa, wb, wc) < -eps:
        return None
    clipped = [max(0.0, w) for w in (wa, wb, wc)]
    total = sum(clipped)
    return (clipped[0] / total, clipped[1] / total, clipped[2] / total)


def blend_log(weights: Mapping[str, float], value_of: Mapping[str, float]) -> float:
    """A multiplicative parameter (a concession exponent, a weight) at a point: the
    weighted geometric mean of the modes' values, so a world that inverts them about 1
    (mirrored) inverts the blend, and one that sets them to 1 (neutral) gives 1. A
    single mode's value comes back unchanged, to the bit."""
    if len(weights) == 1:
        (mode,) = weights
        return value_of[mode]
    if any(value_of[m] <= 0.0 for m in weights):
        return math.fsum(w * value_of[m] for m, w in weights.items())
    return math.exp(math.fsum(w * math.log(value_of[m]) for m, w in weights.items()))


def blend(weights: Mapping[str, float], value_of: Mapping[str, float]) -> float:
    """An additive parameter at a point: the modes' values, weighted."""
    if len(weights) == 1:
        (mode,) = weights
        return value_of[mode]
    return math.fsum(w * value_of[m] for m, w in weights.items())


def share(weights: Mapping[str, float], modes: Iterable[str]) -> float:
    """How much of the point is in `modes` (0-1)."""
    return math.fsum(weights.get(m, 0.0) for m in modes)


def adapt(point: Point, observed: Point, rate: float) -> Point:
    """One round of the adaptive strategy update: the point moves `rate` (0-1) of the way
    towards the behaviour the party saw from the other side this round. A party that meets
    its own behaviour stays put, as does every party at rate 0; the point never leaves
    the square (it is a convex combination of two points on it)."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"the adaptation rate runs from 0 to 1, not {rate!r}")
    out = []
    for own, seen in zip(point, observed, strict=True):
        moved = own + rate * (seen - own)
        out.append(min(SCALE, max(0.0, moved)))
    return (out[0], out[1])


def point_text(point: Point) -> str:
    """'a=7.5 c=2 (competing)': a point and the mode it is named by."""
    return f"a={round(point[0], 2):g} c={round(point[1], 2):g} ({mode_of(point)})"


# What one turn of the other side shows on each scale (an assumption of disputelab's, not
# the paper's: its agents judged the dialogue with a model): holding a stated position
# is assertive, moving off it is not; walking away is the most assertive and least
# cooperative turn there is, a consensus signal the most cooperative; tone says the rest.
SHOWN_ASSERTIVENESS = {"held": 7.5, "moved": 2.5, "walk_away": 10.0}
SHOWN_COOPERATIVENESS = {"hostile": 2.5, "neutral": 5.0, "warm": 7.5}
SHOWN_BY_SIGNAL = {"consensus": 10.0, "walk_away": 0.0}


def shown_point(signal: str, tone: str, moved: bool) -> Point:
    """The point one turn shows: its signal (continue, consensus, walk_away), its tone
    (hostile, neutral, warm) and whether the speaker moved off its stated position."""
    if signal == "walk_away":
        return (SHOWN_ASSERTIVENESS["walk_away"], SHOWN_BY_SIGNAL["walk_away"])
    a = SHOWN_ASSERTIVENESS["moved" if moved else "held"]
    c = SHOWN_BY_SIGNAL.get(signal, SHOWN_COOPERATIVENESS.get(tone, 5.0))
    return (a, c)


def mean_point(points: Iterable[Point]) -> Point | None:
    """The mean of the points, or None for none."""
    pts = list(points)
    if not pts:
        return None
    return (math.fsum(p[0] for p in pts) / len(pts), math.fsum(p[1] for p in pts) / len(pts))
