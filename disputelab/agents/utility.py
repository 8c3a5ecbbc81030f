"""The rule policy's maths as pure functions: option values, package utility, concession.

Utility of a package for a party is the weighted sum of per-topic option values. A ranked
option's value falls linearly with its rank (best 1, last acceptable 1/m); an unacceptable
option makes the whole package infeasible, which puts it below any fallback.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour
from disputelab.scenario.schema import (
    STRATEGIES,
    CultureProfile,
    Party,
    Scenario,
    Strategy,
    TopicPreference,
)
from disputelab.scenario.tki import Point, blend, blend_log, mode_weights, share

MAX_PACKAGES = 200_000


def option_values(pref: TopicPreference, option_ids: list[str]) -> list[float]:
    """Value of each option, in the topic's option order: ranked best 1 down to 1/m, else 0."""
    m = len(pref.ranking)
    rank = {o: r for r, o in enumerate(pref.ranking)}
    return [(m - rank[o]) / m if o in rank else 0.0 for o in option_ids]


def concession_target(progress: float, beta: float, floor: float, ceiling: float = 1.0) -> float:
    """Target utility after `progress` (0-1) of the concession horizon has elapsed.

    Non-increasing in progress and never below `floor`, the party's fallback utility:
    these two properties are what the policy's guarantees rest on.
    """
    p = min(1.0, max(0.0, progress))
    return float(floor + (ceiling - floor) * (1.0 - p ** (1.0 / beta)))


def _weights(strategy: Strategy | Point) -> dict[str, float]:
    return {strategy: 1.0} if isinstance(strategy, str) else mode_weights(strategy)


def strategy_beta(strategy: Strategy | Point, b: Behaviour = DEFAULT_BEHAVIOUR) -> float:
    """Exponent of the concession curve of a Thomas-Kilmann mode (`beta.MODE`), or of a
    point on the plane: the modes' exponents blended by the point's weights on them."""
    if isinstance(strategy, str):
        return b[f"beta.{strategy}"]
    return blend_log(mode_weights(strategy), {m: b[f"beta.{m}"] for m in STRATEGIES})


def self_weight(strategy: Strategy | Point, b: Behaviour = DEFAULT_BEHAVIOUR) -> float:
    """Weight on own utility against matching others, per mode (`self_weight.MODE`), or
    at a point (the modes' weights blended)."""
    if isinstance(strategy, str):
        return b[f"self_weight.{strategy}"]
    return blend_log(mode_weights(strategy), {m: b[f"self_weight.{m}"] for m in STRATEGIES})


def logrolling(point: Strategy | Point, b: Behaviour = DEFAULT_BEHAVIOUR) -> float:
    """How far a party at `point` follows the others on the topics that matter least to
    it: `logrolling.collaborating` times its share of collaborating (0 for other modes)."""
    rolls: dict[str, float] = {m: 0.0 for m in STRATEGIES}
    rolls["collaborating"] = b["logrolling.collaborating"]
    return blend(_weights(point), rolls)


def engage_every(point: Strategy | Point, b: Behaviour = DEFAULT_BEHAVIOUR) -> int:
    """Every how many of its own turns a party at `point` reconsiders its offer: an
    avoider's `avoiding.engage_every`, every turn (1) for the other modes, blended."""
    paces: dict[str, float] = {m: 1.0 for m in STRATEGIES}
    paces["avoiding"] = b["avoiding.engage_every"]
    k = blend(_weights(point), paces)
    return max(1, round(k))


def tone_switches(point: Strategy | Point, b: Behaviour = DEFAULT_BEHAVIOUR) -> tuple[bool, bool]:
    """(flares, warms): whether a party at `point` can flare up (competing's switch, times
    its share of competing) and sound warm (accommodating's and collaborating's)."""
    weights = _weights(point)
    # The switches are 0 or 1 in the table; anything past half-way counts as on.
    flares = b["tone.competing_flare"] * share(weights, ("competing",)) > 0.5
    warms = b["tone.cooperative_warm"] * share(weights, ("accommodating", "collaborating")) > 0.5
    return flares, warms


def culture_beta_factor(culture: CultureProfile | None, b: Behaviour = DEFAULT_BEHAVIOUR) -> float:
    """Multiplier on the concession exponent from Hofstede scores.

    By default high uncertainty avoidance (status quo) and high masculinity (a
    competitive stance) slow concession, and high long-term orientation makes a party
    patient early. Scores at the midpoint (50) leave the strategy's curve unchanged.
    """
    if culture is None:
        return 1.0
    z = (
        b["culture.uncertainty_avoidance"] * (culture.uncertainty_avoidance - 50) / 50
        + b["culture.masculinity"] * (culture.masculinity - 50) / 50
        + b["culture.long_term_orientation"] * (culture.long_term_orientation - 50) / 50
    )
    return math.exp(z)


def mediator_deference(culture: CultureProfile | None, b: Behaviour = DEFAULT_BEHAVIOUR) -> float:
    """How much a party heeds a mediator (0-1): by default higher with power distance."""
    level = b["deference.level"]
    if culture is None:
        return level
    coef = b["culture.power_distance"]
    # Written as base + coef·pd/100 so the defaults give 0.35 + 0.5·pd/100 to the bit.
    return min(1.0, max(0.0, (level - coef * 0.5) + coef * culture.power_distance / 100))


def expressiveness(culture: CultureProfile | None, b: Behaviour = DEFAULT_BEHAVIOUR) -> float:
    """How readily resentment shows as hostility (0-1): indulgence and individualism."""
    if culture is None:
        return 0.5
    coef = b["culture.expressiveness"]
    # 0.5 + coef·(mean - 50)/100, arranged so the default (coef 1) is exact to the bit.
    total = culture.indulgence + culture.individualism
    return min(1.0, max(0.0, (0.5 - coef * 0.5) + coef * 0.5 * total / 100))


@dataclass(frozen=True)
class PreferenceTable:
    """A party's utilities over every package of a scenario, precomputed once."""

    topic_ids: tuple[str, ...]
    option_ids: tuple[tuple[str, ...], ...]
    weights: npt.NDArray[np.float64]  # (k,) summing to 1
    values: tuple[npt.NDArray[np.float64], ...]  # per topic, (m_j,)
    acceptable: tuple[npt.NDArray[np.bool_], ...]  # per topic, (m_j,)
    packages: npt.NDArray[np.intp]  # (P, k) option indices
    utility: npt.NDArray[np.float64]  # (P,)
    feasible: npt.NDArray[np.bool_]  # (P,) no unacceptable option
    flat: npt.NDArray[np.intp]  # (P, k) indices into all options laid end to end
    # Plain-Python mirrors for the per-turn hot path, where numpy scalars are slow.
    w: tuple[float, ...]
    v: tuple[tuple[float, ...], ...]
    ok: tuple[tuple[bool, ...], ...]
    index: tuple[dict[str, int], ...]
    ranked_values: tuple[tuple[float, ...], ...]  # acceptable options' values, best first
    top_sets: tuple[tuple[tuple[str, ...], ...], ...]  # [j][c]: the c best, in option order

    def __post_init__(self) -> None:
        # Frozen, so set the derived count through object.__setattr__ once.
        object.__setattr__(self, "n_options", sum(len(o) for o in self.option_ids))

    n_options: int = field(init=False, compare=False)

    def package_utility(self, choice: Mapping[str, str | None]) -> float:
        """Utility of a (possibly partial) package; missing or unknown topics count 0."""
        total = 0.0
        for j, t in enumerate(self.topic_ids):
            opt = choice.get(t)
            if opt in self.option_ids[j]:
                total += float(self.weights[j] * self.values[j][self.option_ids[j].index(opt)])
        return total

    def package_feasible(self, choice: Mapping[str, str | None]) -> bool:
        for j, t in enumerate(self.topic_ids):
            opt = choice.get(t)
            if opt not in self.option_ids[j]:
                return False
            if not self.acceptable[j][self.option_ids[j].index(opt)]:
                return False
        return True


def preference_table(scenario: Scenario, party: Party) -> PreferenceTable:
    """Precompute a party's package utilities, kept per preference data for the process:
    a table is immutable, and what rule parties derive from it lives in a run's memos."""
    key = (
        tuple((t.id, tuple(t.option_ids())) for t in scenario.topics),
        tuple(
            (t.id, tuple(party.preferences[t.id].ranking), party.weights[t.id])
            for t in scenario.topics
        ),
    )
    return _build_table(key)


@lru_cache(maxsize=512)
def _build_table(
    key: tuple[
        tuple[tuple[str, tuple[str, ...]], ...], tuple[tuple[str, tuple[str, ...], int], ...]
    ],
) -> PreferenceTable:
    topics, prefs = key
    topic_ids = tuple(t for t, _ in topics)
    option_ids = tuple(opts for _, opts in topics)
    n_packages = math.prod(len(o) for o in option_ids)
    if n_packages > MAX_PACKAGES:
        raise ValueError(
            f"{n_packages} option packages exceed the rule policy's limit of {MAX_PACKAGES}; "
            "use fewer topics or options"
        )
    weights = np.array([w for _, _, w in prefs], dtype=np.float64) / 100.0
    values = []
    acceptable = []
    for (_, opts), (_, ranking, _) in zip(topics, prefs, strict=True):
        m = len(ranking)
        rank = {o: r for r, o in enumerate(ranking)}
        values.append(np.array([(m - rank[o]) / m if o in rank else 0.0 for o in opts]))
        acceptable.append(np.array([o in rank for o in opts]))
    packages = np.array(
        list(itertools.product(*(range(len(o)) for o in option_ids))), dtype=np.intp
    ).reshape(n_packages, len(option_ids))
    utility = np.zeros(n_packages)
    feasible = np.ones(n_packages, dtype=bool)
    for j in range(len(option_ids)):
        utility += weights[j] * values[j][packages[:, j]]
        feasible &= acceptable[j][packages[:, j]]
    offsets = np.cumsum([0] + [len(o) for o in option_ids[:-1]]).astype(np.intp)
    return PreferenceTable(
        topic_ids,
        option_ids,
        weights,
        tuple(values),
        tuple(acceptable),
        packages,
        utility,
        feasible,
        packages + offsets,
        tuple(float(x) for x in weights),
        tuple(tuple(float(x) for x in v) for v in values),
        tuple(tuple(bool(x) for x in a) for a in acceptable),
        tuple({o: i for i, o in enumerate(opts)} for opts in option_ids),
        tuple(
            tuple(sorted((float(x) for x in v[a]), reverse=True))
            for v, a in zip(values, acceptable, strict=True)
        ),
        tuple(
            _top_sets(opts, ranking)
            for (_, opts), (_, ranking, _) in zip(topics, prefs, strict=True)
        ),
    )


def _top_sets(option_ids: tuple[str, ...], ranking: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """For c = 0..m, the c best-ranked options listed in the topic's option order."""
    return tuple(tuple(o for o in option_ids if o in ranking[:c]) for c in range(len(ranking) + 1))


def rule_profile(party: Party, b: Behaviour = DEFAULT_BEHAVIOUR) -> dict[str, float]:
    """What a rule party's persona comes to under `b`: the numbers its policy runs on
    (before the seeded individual variation of its concession speed)."""
    persona = party.persona
    culture = persona.culture
    top = max(party.weights.values())
    return {
        "concession exponent": strategy_beta(persona.point, b) * culture_beta_factor(culture, b),
        "weight on own utility": self_weight(persona.point, b),
        "deference to the mediator": mediator_deference(culture, b),
        "expressiveness": expressiveness(culture, b),
        "reactivity": persona.reactivity,
        "resentment per hostile turn": b["resentment.hostility"] * persona.reactivity,
        "weight of the top topic": float(top),
    }
