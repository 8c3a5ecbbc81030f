"""The behavioural assumptions of the rule agents, as one table of named parameters.

A rule party turns a persona (strategy, reactivity, culture) and a dispute cause into
behaviour through the numbers below; so do the settlement protocol's rule counsel (its
concession eagerness per strategy, `settlement.*`) and the bilateral protocol's rule
buyer (how offence and warmth move its anger, trust and price, `bilateral.*`). None of
them is measured: each is an assumption, some with a direction taken from a paper.
Keeping them in one table lets a reviewer see every assumption, lets a condition move
only these, and lets an experiment set any of them to its neutral value (`ablate:`) or
vary them together (`disputelab sensitivity`).

A parameter's neutral value is the one at which its mechanism does nothing (a concession
exponent of 1, a cause shifting nothing). A level with no such value (the resentment at
which a party walks away) has no neutral and cannot be ablated.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from disputelab.errors import DisputelabError
from disputelab.scenario.schema import STRATEGIES

ASSUMPTION = "assumption"
CURVES = "assumption; curve family of Faratin, Sierra & Jennings (1998)"
HOFSTEDE = "assumption; direction from Hofstede's dimension definitions (Hofstede 2001)"
TABLE6 = "assumption; direction from AgentMediation's Table 6 (litigation risk by cause)"


# How the mirrored world reverses a parameter's direction about its neutral value n:
# `reciprocal`, a multiplicative factor (v -> n²/v: a concession exponent 0.3 -> 3.3);
# `negate`, a signed additive effect (v -> 2n - v: a culture or cause sign flipped);
# `keep`, no direction to reverse (a level, a spread, a switch, a share or a chance whose
# opposite the policy has no way to play), so every world but `neutral` keeps its value.
Mirror = Literal["reciprocal", "negate", "keep"]


@dataclass(frozen=True)
class Parameter:
    name: str
    default: float
    neutral: float | None  # None: a level with no neutral value; not ablatable
    low: float  # the range `disputelab sensitivity` samples by default
    high: float
    what: str
    source: str = ASSUMPTION
    mirror: Mirror = "keep"


def _a(word: str) -> str:
    """The word with its indefinite article (the modes: a competing, an avoiding)."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _posture_parameters() -> list[Parameter]:
    beta = {
        "competing": 0.3,
        "avoiding": 0.6,
        "collaborating": 0.8,
        "compromising": 1.0,
        "accommodating": 3.0,
    }
    own = {"competing": 3.0, "accommodating": 0.3}
    out = []
    for mode in STRATEGIES:
        out.append(
            Parameter(
                f"beta.{mode}",
                beta[mode],
                1.0,
                0.2,
                4.0,
                f"Concession exponent of {_a(mode)} party: below 1 it holds out and concedes "
                "late (Boulware), above 1 it gives ground early (Conceder).",
                CURVES,
                "reciprocal",
            )
        )
        out.append(
            Parameter(
                f"self_weight.{mode}",
                own.get(mode, 1.0),
                1.0,
                0.2,
                4.0,
                f"Weight {_a(mode)} party puts on its own utility, against matching what "
                "the others back, when it picks among packages worth its target.",
                mirror="reciprocal",
            )
        )
    return out


_TABLE: list[Parameter] = [
    *_posture_parameters(),
    Parameter(
        "beta.individual_sd",
        0.15,
        0.0,
        0.0,
        0.5,
        "Spread (sd of a log-normal factor) of a party's own concession speed around "
        "its posture's, so seeds explore a neighbourhood rather than one path.",
    ),
    Parameter(
        "logrolling.collaborating",
        1.0,
        0.0,
        0.0,
        2.0,
        "How much more a collaborating party follows the others on the topics that "
        "matter least to it: it follows by 1 + x·(0.5 - w/w_max).",
        mirror="negate",
    ),
    Parameter(
        "avoiding.engage_every",
        3.0,
        1.0,
        1.0,
        5.0,
        "An avoiding party reconsiders its offer only every k-th turn of its own, and "
        "otherwise lets its offer stand.",
    ),
    Parameter(
        "tone.competing_flare",
        1.0,
        0.0,
        0.0,
        1.0,
        "1: a reactive competing party sounds hostile once its resentment passes "
        "tone.flare_resentment; "
        "0: competing parties sound like any other.",
    ),
    Parameter(
        "tone.flare_resentment",
        0.25,
        None,
        0.1,
        0.5,
        "Resentment past which a reactive competing party flares up (sounds hostile).",
    ),
    Parameter(
        "tone.flare_reactivity",
        0.3,
        None,
        0.0,
        1.0,
        "Reactivity past which a resentful competing party flares up.",
    ),
    Parameter(
        "tone.dug_in_hostile",
        0.4,
        None,
        0.0,
        1.0,
        "Chance that a dug-in party sounds hostile, at an expressiveness of 0.",
    ),
    Parameter(
        "tone.dug_in_expressive",
        0.6,
        0.0,
        0.0,
        0.6,
        "Chance added to a dug-in party's hostility per unit of expressiveness (0-1): "
        "mirrored through culture.expressiveness, which carries the direction, so kept.",
    ),
    Parameter(
        "tone.warm_below",
        0.1,
        None,
        0.0,
        0.3,
        "Resentment under which a calm accommodating or collaborating party sounds warm.",
    ),
    Parameter(
        "tone.cooperative_warm",
        1.0,
        0.0,
        0.0,
        1.0,
        "1: a calm accommodating or collaborating party sounds warm; 0: neutral.",
    ),
    Parameter(
        "culture.uncertainty_avoidance",
        -0.5,
        0.0,
        -1.0,
        1.0,
        "Change in the log concession exponent per unit of (uncertainty avoidance - "
        "50)/50: negative, so a party that avoids uncertainty concedes more slowly.",
        HOFSTEDE,
        mirror="negate",
    ),
    Parameter(
        "culture.masculinity",
        -0.4,
        0.0,
        -1.0,
        1.0,
        "Change in the log concession exponent per unit of (masculinity - 50)/50: "
        "negative, a competitive culture concedes more slowly.",
        HOFSTEDE,
        mirror="negate",
    ),
    Parameter(
        "culture.long_term_orientation",
        -0.2,
        0.0,
        -1.0,
        1.0,
        "Change in the log concession exponent per unit of (long-term orientation - "
        "50)/50: negative, a patient party holds out early.",
        HOFSTEDE,
        mirror="negate",
    ),
    Parameter(
        "culture.power_distance",
        0.5,
        0.0,
        0.0,
        1.0,
        "Change in deference to the mediator per unit of (power distance - 50)/100.",
        HOFSTEDE,
        mirror="negate",
    ),
    Parameter(
        "culture.expressiveness",
        1.0,
        0.0,
        0.0,
        2.0,
        "Change in expressiveness (how readily resentment shows as hostility) per unit "
        "of (mean of indulgence and individualism - 50)/100, around 0.5.",
        HOFSTEDE,
        mirror="negate",
    ),
    Parameter(
        "deference.level",
        0.6,
        0.0,
        0.0,
        1.0,
        "How much a party heeds the mediator (0-1) at a power distance of 50 or with no "
        "culture: it raises the chance of taking up a proposal worth the target, the "
        "support a proposal gets, and how much a mediator turn calms.",
    ),
    Parameter(
        "mediator.calming",
        0.6,
        0.0,
        0.0,
        1.0,
        "Share of a party's resentment a mediator turn removes, times its deference.",
        mirror="negate",
    ),
    Parameter(
        "resentment.hostility",
        0.6,
        0.0,
        0.0,
        1.2,
        "Resentment a hostile turn adds, times the hearer's reactivity.",
        mirror="negate",
    ),
    Parameter(
        "resentment.hurt",
        0.5,
        0.0,
        0.0,
        1.0,
        "Resentment per unit of weighted utility another party's move takes away, "
        "times the hearer's reactivity.",
        mirror="negate",
    ),
    Parameter(
        "resentment.soothe",
        0.3,
        0.0,
        0.0,
        0.6,
        "Resentment removed per unit of weighted utility another party's move adds.",
        mirror="negate",
    ),
    Parameter(
        "resentment.cooling",
        0.75,
        1.0,
        0.5,
        1.0,
        "Share of its resentment a party keeps from one of its turns to the next.",
        mirror="reciprocal",
    ),
    Parameter(
        "resentment.dig_in",
        0.5,
        None,
        0.2,
        1.2,
        "Resentment at which a party digs in: it backs only its current offer and "
        "accepts nothing else until it cools down.",
    ),
    Parameter(
        "resentment.walk_away",
        1.4,
        None,
        0.8,
        3.0,
        "Resentment at which a party walks away from the talks.",
    ),
]

_CAUSES = {
    "misconduct": (0.30, 0.0),
    "resource": (0.15, 10.0),
    "information": (0.05, 0.0),
    "external": (-0.05, -5.0),
    "legal": (-0.08, 0.0),
}
for _key, (_r, _pts) in _CAUSES.items():
    _TABLE.append(
        Parameter(
            f"cause.{_key}.reactivity",
            _r,
            0.0,
            -0.3,
            0.5,
            f"Change in every party's reactivity under a {_key} cause (offline stand-in "
            "for the paper's rewritten brief), times the intensity.",
            TABLE6,
            "negate",
        )
    )
    _TABLE.append(
        Parameter(
            f"cause.{_key}.top_topic_points",
            _pts,
            0.0,
            -10.0,
            15.0,
            f"Weight points moved onto each party's most important topic under a {_key} "
            "cause (negative: off it), times the intensity.",
            TABLE6,
            "negate",
        )
    )

# Private caucus turns: what a rule party tells the mediator alone.
_TABLE += [
    Parameter(
        "disclosure.caucus_share",
        0.5,
        0.0,
        0.0,
        1.0,
        "Share of its acceptable options not yet conceded in the open that a party names "
        "to the mediator in a private caucus (0: it names none).",
    ),
    Parameter(
        "disclosure.caucus_truthfulness",
        0.8,
        1.0,
        0.0,
        1.0,
        "Chance that each option a party names in caucus is one it would really accept, "
        "rather than a bluff (an option it would not take).",
    ),
    Parameter(
        "disclosure.offer_band",
        0.3,
        1.0,
        0.02,
        1.0,
        "As a negotiator (acceptable set private), a party offers among packages worth "
        "between its target and its target plus this much, so its offers concede as its "
        "target falls (1: any package worth the target, the full-disclosure choice).",
    ),
]

_TABLE.append(
    Parameter(
        "adaptive.rate",
        0.5,
        0.0,
        0.0,
        1.0,
        "Under strategy_update:adaptive, the share of the way a party's strategy point "
        "moves each bargaining round towards the point the others' turns showed (held or "
        "moved, tone, signal; see disputelab.scenario.tki); 0 keeps every point static.",
        "assumption; AgentMediation's agents re-judged their point with a model instead",
    )
)
_TABLE.append(
    Parameter(
        "legal.cite_retrieved",
        1.0,
        0.0,
        0.0,
        1.0,
        "Share of the retrieved legal bases the staged rule mediator cites, in retrieval "
        "order (1: every one, so legal-basis recall rises with k by construction; 0: only "
        "the statutes named in the case's brief and facts).",
    )
)


def _settlement_parameters() -> list[Parameter]:
    """The rule settlement counsel's concession eagerness per Thomas-Kilmann mode."""
    eagerness = {
        "competing": 0.35,
        "avoiding": 0.6,
        "compromising": 1.0,
        "collaborating": 1.3,
        "accommodating": 2.5,
    }
    return [
        Parameter(
            f"settlement.eagerness.{mode}",
            eagerness[mode],
            1.0,
            0.2,
            4.0,
            f"Concession eagerness of settlement counsel for {_a(mode)} party (the rule "
            "counsel, and a planning counsel's own curve): it has conceded progress ** "
            "(1/eagerness) of the way from its target to its walk-away, so below 1 it holds "
            "out (Boulware), above 1 it gives ground early (Conceder).",
            CURVES,
            "reciprocal",
        )
        for mode in STRATEGIES
    ]


_TABLE += _settlement_parameters()

# The bilateral protocol's rule buyer: how what it hears turns into anger, trust and a
# relationship, and those into its price and its walking out. Offence and warmth are read
# off the words (`bilateral.agents.norms`); these say how much they move the buyer.
_BUYER = "the bilateral rule buyer"
_TABLE += [
    Parameter(
        "bilateral.offence_per_reactivity",
        2.0,
        0.0,
        0.0,
        4.0,
        f"Offence sensitivity of {_BUYER} per unit of its persona's reactivity: the anger a "
        "phrase of severity 1 adds (0: nothing offends it). Negative (mirrored): offence "
        "calms it and builds trust; the terms it feeds below carry no direction of their own.",
        mirror="negate",
    ),
    Parameter(
        "bilateral.quit_anger",
        1.2,
        None,
        0.6,
        3.0,
        f"Anger at which {_BUYER} walks out of the negotiation.",
    ),
    Parameter(
        "bilateral.anger_kept",
        0.6,
        1.0,
        0.3,
        1.0,
        f"Share of its anger {_BUYER} keeps from one of its turns to the next.",
        mirror="reciprocal",
    ),
    Parameter(
        "bilateral.hardening",
        0.5,
        0.0,
        0.0,
        1.0,
        f"How much full anger slows {_BUYER}'s concession (its curve's progress times "
        "1 - this x anger): mirrored through bilateral.offence_per_reactivity, which "
        "carries the direction, so kept.",
    ),
    Parameter(
        "bilateral.trust_per_warmth",
        0.25,
        0.0,
        0.0,
        0.5,
        f"Trust {_BUYER} gains per unit of warmth it hears (apology, respect, empathy, "
        "partnership).",
        mirror="negate",
    ),
    Parameter(
        "bilateral.trust_per_offence",
        0.35,
        0.0,
        0.0,
        0.7,
        f"Trust {_BUYER} loses per unit of offence it takes: mirrored through "
        "bilateral.offence_per_reactivity, so kept.",
    ),
    Parameter(
        "bilateral.relation_per_warmth",
        0.3,
        0.0,
        0.0,
        0.6,
        f"Relationship {_BUYER} feels grow per unit of warmth it hears (its relational "
        "read-out, which the negotiation reward scores).",
        mirror="negate",
    ),
    Parameter(
        "bilateral.relation_per_offence",
        0.25,
        0.0,
        0.0,
        0.5,
        f"Relationship {_BUYER} feels shrink per unit of offence it takes: mirrored "
        "through bilateral.offence_per_reactivity, so kept.",
    ),
    Parameter(
        "bilateral.trust_premium",
        0.1,
        0.0,
        0.0,
        0.3,
        f"Share of the opening gap full trust adds to the most {_BUYER} will pay: mirrored "
        "through what builds trust, so kept.",
    ),
]

# The values each parameter can take at all (the policy divides by a concession exponent,
# exponentiates culture terms, reads shares and chances as such). First match wins.
_DOMAINS: tuple[tuple[str, tuple[float, float]], ...] = (
    ("beta.individual_sd", (0.0, 2.0)),
    ("beta.", (0.01, 100.0)),
    ("self_weight.", (0.0, 100.0)),
    # Down to -2 so the mirrored world's -1 (and the mirror of any value up to 2) plays:
    # a collaborator then follows the others most on the topics that matter MOST to it,
    # by 1 + x·(0.5 - w/w_max), never below 0.
    ("logrolling.", (-2.0, 10.0)),
    ("avoiding.engage_every", (1.0, 100.0)),
    ("tone.", (0.0, 1.0)),
    ("culture.", (-5.0, 5.0)),
    ("deference.", (0.0, 1.0)),
    # Negative calming (the mirrored world's) is a mediator turn that stirs resentment.
    ("mediator.calming", (-1.0, 1.0)),
    # Above 1 (the mirrored world's 1/0.75) resentment grows from one turn to the next.
    ("resentment.cooling", (0.0, 10.0)),
    # Negative (mirrored): hostility and hurt soothe, favourable moves stir resentment.
    ("resentment.hostility", (-100.0, 100.0)),
    ("resentment.hurt", (-100.0, 100.0)),
    ("resentment.soothe", (-100.0, 100.0)),
    ("resentment.", (0.0, 100.0)),
    ("cause.", (-100.0, 100.0)),
    ("disclosure.", (0.0, 1.0)),
    ("adaptive.", (0.0, 1.0)),
    ("legal.", (0.0, 1.0)),
    ("settlement.eagerness.", (0.01, 100.0)),
    # Negative (mirrored): offence calms the buyer, lowers its anger below 0 and lifts
    # its trust; anger kept above 1 grows from one turn to the next.
    ("bilateral.offence_per_reactivity", (-100.0, 100.0)),
    ("bilateral.quit_anger", (0.0, 100.0)),
    ("bilateral.anger_kept", (0.0, 10.0)),
    ("bilateral.hardening", (-1.0, 1.0)),
    ("bilateral.trust_premium", (-1.0, 1.0)),
    ("bilateral.", (-10.0, 10.0)),
)


def domain(name: str) -> tuple[float, float]:
    """The values parameter `name` can take."""
    return next(d for prefix, d in _DOMAINS if name.startswith(prefix))


PARAMETERS: dict[str, Parameter] = {p.name: p for p in _TABLE}


class BehaviourError(DisputelabError, ValueError):
    """An unknown parameter, a value out of range, or one with no neutral value."""


def _known(name: str) -> Parameter:
    p = PARAMETERS.get(name)
    if p is None:
        close = difflib.get_close_matches(name, list(PARAMETERS), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise BehaviourError(
            f"unknown behaviour parameter {name!r}{hint} (`disputelab conditions "
            "parameters` lists them)"
        )
    return p


@dataclass(frozen=True)
class Behaviour:
    """The table's values with some overridden; hashable, so agents may key memos on it."""

    overrides: tuple[tuple[str, float], ...] = ()
    _values: dict[str, float] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        values = {p.name: p.default for p in _TABLE}
        for name, value in self.overrides:
            _known(name)
            values[name] = float(value)
        object.__setattr__(self, "_values", values)

    @classmethod
    def of(cls, overrides: Mapping[str, float] | None) -> Behaviour:
        items = sorted((overrides or {}).items())
        return DEFAULT_BEHAVIOUR if not items else cls(tuple(items))

    def __getitem__(self, name: str) -> float:
        return self._values[name]

    def changed(self) -> dict[str, float]:
        """The values that differ from the table's defaults."""
        return {n: v for n, v in self._values.items() if v != PARAMETERS[n].default}


DEFAULT_BEHAVIOUR = Behaviour()


def neutral_overrides(names: Iterable[str]) -> dict[str, float]:
    """Each named parameter at its neutral value; a level without one is an error."""
    out = {}
    for name in names:
        p = _known(name)
        if p.neutral is None:
            raise BehaviourError(
                f"{name} has no neutral value (it is a level, not an effect), so it cannot "
                "be ablated; vary it with `disputelab sensitivity` instead"
            )
        out[name] = p.neutral
    return out


WORLDS = ("shipped", "neutral", "mirrored")
"""The parameter worlds an experiment can be played in (`worlds:` in a spec): the table as
shipped, every parameter at its neutral value, every direction reversed."""


def _reciprocal(value: float, neutral: float) -> float:
    return neutral * neutral / value if value > 0 else math.inf  # clipped to the domain


# The mirror of a value about its parameter's neutral value, per `Parameter.mirror`: each
# is its own inverse and leaves the neutral value where it is.
_MIRRORS: dict[str, Callable[[float, float], float]] = {
    "reciprocal": _reciprocal,
    "negate": lambda value, neutral: 2 * neutral - value,
    "keep": lambda value, neutral: value,
}


def mirrored_value(p: Parameter, value: float) -> float:
    """`value` of parameter `p` with its direction reversed (a level stays as it is)."""
    if p.neutral is None:
        return value
    low, high = domain(p.name)
    return min(high, max(low, _MIRRORS[p.mirror](value, p.neutral)))


def world_values(world: str, values: Mapping[str, float]) -> dict[str, float]:
    """Every parameter's value in `world`, from its shipped value in `values` (the table's
    default where `values` has none): `neutral` sets each to its neutral value (a level
    keeps its own), `mirrored` reverses each one's direction."""
    out = {}
    for name, p in PARAMETERS.items():
        value = float(values.get(name, p.default))
        if world == "neutral":
            value = value if p.neutral is None else p.neutral
        elif world == "mirrored":
            value = mirrored_value(p, value)
        elif world != "shipped":
            raise BehaviourError(f"unknown world {world!r}; use {', '.join(WORLDS)}")
        out[name] = value
    return out


def world_overrides(
    world: str, overrides: Mapping[str, float], rows: Collection[str] | None = None
) -> dict[str, float]:
    """The behaviour overrides an episode of `world` plays under, given the experiment's
    own `overrides`: those as they are in the shipped world, else every value of the
    world that differs from the table's default (of `rows` only, when given: those the
    protocol's agents read; and of any the experiment set itself)."""
    if world == "shipped":
        return dict(overrides)
    values = world_values(world, overrides)
    return {
        n: v
        for n, v in values.items()
        if v != PARAMETERS[n].default and (rows is None or n in rows or n in overrides)
    }


def check_in_domain(name: str, value: float) -> None:
    low, high = domain(name)
    if not low <= value <= high:
        raise BehaviourError(
            f"behaviour parameter {name} takes values from {low:g} to {high:g}, not {value:g}"
        )


def check_overrides(values: Mapping[str, object]) -> dict[str, float]:
    """Overrides from a spec or the command line: known names and finite numbers."""
    out = {}
    for name, value in values.items():
        _known(name)
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise BehaviourError(
                f"behaviour parameter {name} needs a number, not {value!r}"
            ) from None
        if number != number or number in (float("inf"), float("-inf")):
            raise BehaviourError(f"behaviour parameter {name} needs a finite number")
        check_in_domain(name, number)
        out[name] = number
    return out


def parameters_markdown() -> str:
    """The table as markdown, for docs/behaviour.md (a test keeps the file in step)."""
    lines = [
        "| parameter | default | neutral | mirrored | range sampled | what it does | source |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in PARAMETERS.values():
        neutral = "none (a level)" if p.neutral is None else f"{p.neutral:g}"
        mirror = f"{mirrored_value(p, p.default):.3g} ({p.mirror})"
        lines.append(
            f"| `{p.name}` | {p.default:g} | {neutral} | {mirror} | {p.low:g} to {p.high:g} | "
            f"{p.what} | {p.source} |"
        )
    return "\n".join(lines) + "\n"
