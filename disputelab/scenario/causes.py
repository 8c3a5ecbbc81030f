"""AgentMediation's dispute-cause taxonomy and an offline stand-in for cause injection.

The paper injects a cause by having an LLM rewrite the case brief (AgentMediation paper). Rule
agents cannot read a rewritten brief, so `apply_cause_offline` expresses the cause in the
structured persona instead, following the direction of the paper's Table 6. The numbers
are the default values of the behaviour parameters `cause.CATEGORY.reactivity` and
`cause.CATEGORY.top_topic_points` (`disputelab.scenario.behaviour`), assumptions that an
experiment can ablate:

| cause       | reactivity | weights                           | grounding in Table 6              |
|-------------|------------|-----------------------------------|-----------------------------------|
| misconduct  | +0.30      | unchanged                         | highest risk (LR 53.00), lowest   |
|             |            |                                   | SR and satisfaction: moral anger  |
| resource    | +0.15      | +10 points to each party's top    | LR 51.00: realistic conflict over |
|             |            | topic (the money at stake)        | scarce stakes sharpens the main   |
|             |            |                                   | issue                             |
| information | +0.05      | unchanged                         | LR 45.00, the reference condition |
| external    | -0.05      | -5 points from each party's top   | LR 39.75, high consensus: a       |
|             |            | topic, spread over the others     | shared problem, more trading      |
| legal       | -0.08      | unchanged                         | lowest LR (36.00): a procedural,  |
|             |            |                                   | not personal, framing             |

Every change is multiplied by `intensity` (0 leaves the scenario unchanged; 1 is the
table). The paper's code escalated every cause ("超级加剧"), which confounds cause with
escalation; here escalation is this separate, reported knob. Weight points move
proportionally to or from the other topics, and weights stay positive integers summing
to 100; reactivity is clamped to [0, 1]. The scenario also gains one sentence naming the
cause, in its language, in the background and in every persona's traits.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour
from disputelab.scenario.schema import Party, Scenario


@dataclass(frozen=True)
class Cause:
    key: str
    zh: str
    en: str
    description: str


@dataclass(frozen=True)
class CauseCategory(Cause):
    subcategories: tuple[Cause, ...]


def cause_parameters(category: str) -> tuple[str, str]:
    """The two behaviour parameters through which a cause category acts."""
    return f"cause.{category}.reactivity", f"cause.{category}.top_topic_points"


_FRAMING_ZH = {
    "information": "双方对事实、约定或风险的掌握与理解并不一致。",
    "resource": "双方争夺的是有限的利益，各自都把核心诉求看得更重。",
    "misconduct": "一方认为对方的行为有违诚信，信任已经受损，情绪对立明显。",
    "legal": "问题更多出在规则本身不够明确，而非某一方的过错。",
    "external": "双方都受到了自身无法控制的外部变化的影响，面对的是共同的难题。",
}
_FRAMING_EN = {
    "information": "The parties know or read the facts, terms or risks differently.",
    "resource": "The parties compete for a limited stake and each holds its main claim harder.",
    "misconduct": "One side sees the other's conduct as a breach of good faith; trust is damaged.",
    "legal": "The trouble lies more in unclear rules than in either party's fault.",
    "external": "Both sides were hit by outside changes neither controlled: a shared problem.",
}


@lru_cache(maxsize=1)
def dispute_causes() -> tuple[CauseCategory, ...]:
    """The 5 categories with their 29 subcategories, from the cited data file."""
    text = resources.files("disputelab.scenario").joinpath("data/dispute_causes.yaml")
    data = yaml.safe_load(text.read_text(encoding="utf-8"))
    return tuple(
        CauseCategory(
            key=c["key"],
            zh=c["zh"],
            en=c["en"],
            description=c["description"],
            subcategories=tuple(
                Cause(key=s["key"], zh=s["zh"], en=s["en"], description=s["description"])
                for s in c["subcategories"]
            ),
        )
        for c in data["categories"]
    )


def _lookup(key: str) -> tuple[CauseCategory, Cause]:
    for cat in dispute_causes():
        if key == cat.key:
            return cat, cat
        for sub in cat.subcategories:
            if key == sub.key:
                return cat, sub
    valid = ", ".join(c.key for c in dispute_causes())
    raise ValueError(
        f"unknown dispute cause {key!r}; use one of {valid}, or a subcategory key such as "
        "misconduct.bad_faith (see dispute_causes.yaml)"
    )


def shift_weights(weights: dict[str, int], topic: str, points: float) -> dict[str, int]:
    """Move `points` onto `topic` (negative: off it) from the others, pro rata; sum stays 100."""
    others = [t for t in weights if t != topic]
    if not others or round(points) == 0:
        return dict(weights)
    floor = len(others)
    # Keep every topic at 1 or more: the schema rejects a zero weight.
    points = min(points, sum(weights[t] for t in others) - floor)
    points = max(points, 1 - weights[topic])
    target = {topic: weights[topic] + points}
    spare = {t: weights[t] - 1 for t in others}
    pool = sum(spare.values())
    for t in others:
        share = spare[t] / pool if pool else 1 / len(others)
        target[t] = weights[t] - points * share
    out = {t: max(1, int(v)) for t, v in target.items()}
    # Largest remainder: hand out what truncation lost, biggest fractions first.
    order = sorted(target, key=lambda t: (out[t] - target[t], list(weights).index(t)))
    i = 0
    while sum(out.values()) < 100:
        out[order[i % len(order)]] += 1
        i += 1
    while sum(out.values()) > 100:
        t = max((t for t in out if out[t] > 1), key=lambda t: out[t] - target[t])
        out[t] -= 1
    return {t: out[t] for t in weights}


def _top_topic(party: Party, topic_order: list[str]) -> str:
    return max(topic_order, key=lambda t: (party.weights.get(t, 0), -topic_order.index(t)))


def apply_cause_offline(
    scenario: Scenario, key: str, intensity: float = 1.0, behaviour: Behaviour = DEFAULT_BEHAVIOUR
) -> Scenario:
    """A copy of `scenario` with the dispute cause `key` expressed in personas and weights."""
    category, cause = _lookup(key)
    if not intensity >= 0:
        raise ValueError(f"intensity must be 0 or more, got {intensity}")
    out = scenario.model_copy(deep=True)
    if intensity == 0:
        return out
    reactivity_name, points_name = cause_parameters(category.key)
    reactivity_shift, points = behaviour[reactivity_name], behaviour[points_name]
    topic_order = [t.id for t in out.topics]
    zh = out.language.startswith("zh")
    if zh:
        label = category.zh if cause is category else f"{category.zh}（{cause.zh}）"
        sentence = f"纠纷成因：{label}。{_FRAMING_ZH[category.key]}"
        trait = f"把本纠纷看作{category.zh}"
    else:
        label = category.en if cause is category else f"{category.en}: {cause.en}"
        sentence = f"Cause of the dispute: {label}. {_FRAMING_EN[category.key]}"
        trait = f"sees the dispute as {category.en.lower()}"
    out.background = f"{out.background}\n\n{sentence}"
    for party in out.parties:
        r = party.persona.reactivity + reactivity_shift * intensity
        party.persona.reactivity = round(min(1.0, max(0.0, r)), 4)
        if points:
            top = _top_topic(party, topic_order)
            party.weights = shift_weights(party.weights, top, points * intensity)
        party.persona.traits = [*party.persona.traits, trait]
    return Scenario.model_validate(out.model_dump())
