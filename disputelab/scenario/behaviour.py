"""The behavioural assumptions of the rule agents, as one table of named parameters.

A rule party turns a persona (strategy, reactivity, culture) and a dispute cause into
behaviour through the numbers below. None of them is measured: each is an assumption,
some with a direction taken from a paper. Keeping them in one table lets a reviewer see
every assumption, lets a condition move only these, and lets an experiment set any of
them to its neutral value (`ablate:`) or vary them together (`disputelab sensitivity`).

A parameter's neutral value is the one at which its mechanism does nothing (a concession
exponent of 1, a cause shifting nothing). A level with no such value (the resentment at
which a party walks away) has no neutral and cannot be ablated.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from disputelab.errors import DisputelabError
from disputelab.scenario.schema import STRATEGIES

ASSUMPTION = "assumption"
CURVES = "assumption; curve family of Faratin, Sierra & Jennings (1998)"
HOFSTEDE = "assumption; direction from Hofstede's dimension definitions (Hofstede 2001)"
TABLE6 = "assumption; direction from AgentMediation's Table 6 (litigation risk by cause)"


@dataclass(frozen=True)
class Parameter:
    name: str
    default: float
    neutral: float | None  # None: a level with no neutral value; not ablatable
    low: float  # the range `disputelab sensitivity` samples by default
    high: float
    what: str
    source: str = ASSUMPTION


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
        "1: a reactive competing party sounds hostile once its resentment passes 0.25; "
        "0: competing parties sound like any other.",
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
    ),
    Parameter(
        "culture.power_distance",
        0.5,
        0.0,
        0.0,
        1.0,
        "Change in deference to the mediator per unit of (power distance - 50)/100.",
        HOFSTEDE,
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
    ),
    Parameter(
        "resentment.hostility",
        0.6,
        0.0,
        0.0,
        1.2,
        "Resentment a hostile turn adds, times the hearer's reactivity.",
    ),
    Parameter(
        "resentment.hurt",
        0.5,
        0.0,
        0.0,
        1.0,
        "Resentment per unit of weighted utility another party's move takes away, "
        "times the hearer's reactivity.",
    ),
    Parameter(
        "resentment.soothe",
        0.3,
        0.0,
        0.0,
        0.6,
        "Resentment removed per unit of weighted utility another party's move adds.",
    ),
    Parameter(
        "resentment.cooling",
        0.75,
        1.0,
        0.5,
        1.0,
        "Share of its resentment a party keeps from one of its turns to the next.",
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

# The values each parameter can take at all (the policy divides by a concession exponent,
# exponentiates culture terms, reads shares and chances as such). First match wins.
_DOMAINS: tuple[tuple[str, tuple[float, float]], ...] = (
    ("beta.individual_sd", (0.0, 2.0)),
    ("beta.", (0.01, 100.0)),
    ("self_weight.", (0.0, 100.0)),
    ("logrolling.", (0.0, 10.0)),
    ("avoiding.engage_every", (1.0, 100.0)),
    ("tone.", (0.0, 1.0)),
    ("culture.", (-5.0, 5.0)),
    ("deference.", (0.0, 1.0)),
    ("mediator.calming", (0.0, 1.0)),
    ("resentment.cooling", (0.0, 1.0)),
    ("resentment.", (0.0, 100.0)),
    ("cause.", (-100.0, 100.0)),
    ("disclosure.", (0.0, 1.0)),
    ("legal.", (0.0, 1.0)),
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
        "| parameter | default | neutral | range sampled | what it does | source |",
        "|---|---|---|---|---|---|",
    ]
    for p in PARAMETERS.values():
        neutral = "none (a level)" if p.neutral is None else f"{p.neutral:g}"
        lines.append(
            f"| `{p.name}` | {p.default:g} | {neutral} | {p.low:g} to {p.high:g} | "
            f"{p.what} | {p.source} |"
        )
    return "\n".join(lines) + "\n"
