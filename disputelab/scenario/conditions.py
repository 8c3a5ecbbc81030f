"""Conditions: named Scenario -> Scenario transforms, composable with ','.

Together with `general` they give SoCRATES's fifteen probing conditions (SoCRATES paper),
and `strategy` gives AgentMediation's one-party / all-parties strategy design. Each
perturbs one part of the scenario: the shared background, a party's profile, or the
party set. Rule agents read the structured persona, LLM agents read the same change in
their instructions, so one condition means the same thing to both.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from disputelab.errors import DisputelabError
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, PARAMETERS, Behaviour
from disputelab.scenario.causes import apply_cause_offline, cause_parameters, dispute_causes
from disputelab.scenario.cultures import hofstede
from disputelab.scenario.schema import (
    STRATEGIES,
    DrawnStrategy,
    Fallback,
    LegalContext,
    Party,
    Persona,
    Scenario,
    Strategy,
    TopicPreference,
)
from disputelab.scenario.tki import Point, check_point, mode_of


class ConditionError(DisputelabError, ValueError):
    """An unknown condition or a bad parameter; the message lists the valid ones."""


_POSTURE_TEXT = {
    "competing": "Each party pursues its own interests first and yields only under pressure.",
    "avoiding": "Each party sidesteps open conflict, postpones hard issues and engages little.",
    "accommodating": "Each party puts the others' concerns ahead of its own to keep the peace.",
}
_POSTURE_ZH = {
    "competing": "各方优先追求自身利益，只在压力下让步。",
    "avoiding": "各方回避正面冲突，推迟困难议题，很少投入。",
    "accommodating": "各方把他人的关切放在自己之前，以维持和气。",
}


def _copy(s: Scenario) -> Scenario:
    return s.model_copy(deep=True)


def general(s: Scenario, arg: str, b: Behaviour = DEFAULT_BEHAVIOUR) -> Scenario:
    return _copy(s)


def posture(s: Scenario, arg: str, b: Behaviour = DEFAULT_BEHAVIOUR) -> Scenario:
    if arg not in _POSTURE_TEXT:
        raise ConditionError(f"posture:{arg}: use one of {', '.join(_POSTURE_TEXT)}")
    out = _copy(s)
    text = (_POSTURE_ZH if s.language.startswith("zh") else _POSTURE_TEXT)[arg]
    out.background = f"{s.background}\n\n{text}"
    for p in out.parties:
        p.persona.place(mode=arg)  # type: ignore[arg-type]  # checked above
    return out


_POINT = re.compile(r"a(\d+(?:\.\d+)?)c(\d+(?:\.\d+)?)")


def strategy_point(text: str) -> tuple[Strategy | None, Point | None]:
    """(mode, None) for a mode's name, (None, point) for aAcC (assertiveness A and
    cooperativeness C, each 0-10: a7c2.5), else (None, None)."""
    if text in STRATEGIES:
        return text, None
    match = _POINT.fullmatch(text)
    if match is None:
        return None, None
    try:
        return None, check_point(float(match.group(1)), float(match.group(2)))
    except ValueError:
        return None, None


def strategy(s: Scenario, arg: str, b: Behaviour = DEFAULT_BEHAVIOUR) -> Scenario:
    """strategy:MODE@one|all, or strategy:aAcC@one|all for any point of the TKI plane
    (assertiveness A, cooperativeness C, 0-10). For @one the party is drawn per episode
    from the episode's seed (`draw_strategy_party`); the condition only names the strategy."""
    text, _, scope = arg.partition("@")
    mode, point = strategy_point(text)
    if (mode is None and point is None) or scope not in ("one", "all"):
        raise ConditionError(
            f"strategy:{arg}: use strategy:MODE@one or strategy:MODE@all with MODE one of "
            f"{', '.join(STRATEGIES)}, or a point aAcC (assertiveness A, cooperativeness C, "
            "each 0-10: strategy:a7c2@one)"
        )
    out = _copy(s)
    if scope == "one":
        named = mode or mode_of(point)  # type: ignore[arg-type]  # one of them is set
        a, c = point if point is not None else (None, None)
        out.drawn_strategy = DrawnStrategy(
            strategy=named,
            assertiveness=a,
            cooperativeness=c,
        )
        return out
    for p in out.parties:
        p.persona.place(point, mode)
    return out


def draw_strategy_party(s: Scenario, seed: int) -> Scenario:
    """The scenario an episode of `seed` plays: where a strategy is for one party
    (strategy:...@one), that party drawn from the seed and given it, and named in
    `drawn_strategy.party`. The same seed draws the same party; across seeds every party
    is drawn. A scenario with nothing to draw, or drawn already, comes back as it is."""
    drawn = s.drawn_strategy
    if drawn is None or drawn.party is not None:
        return s
    out = _copy(s)
    index = random.Random(f"strategy-party:{seed}").randrange(len(out.parties))
    party = out.parties[index]
    explicit = drawn.assertiveness is not None
    party.persona.place(drawn.point if explicit else None, None if explicit else drawn.strategy)
    assert out.drawn_strategy is not None
    out.drawn_strategy.party = party.id
    return out


def strategy_update(s: Scenario, arg: str, b: Behaviour = DEFAULT_BEHAVIOUR) -> Scenario:
    """strategy_update:adaptive: after each bargaining round every party's strategy point
    moves towards the behaviour it saw from the others (staged protocol); static undoes
    it. (AgentMediation's dynamic strategies, Tables 16-17, adapted every party.)"""
    if arg not in ("static", "adaptive"):
        raise ConditionError(f"strategy_update:{arg}: use strategy_update:adaptive or static")
    out = _copy(s)
    for p in out.parties:
        p.persona.strategy_update = arg  # type: ignore[assignment]  # checked above
    return out


def reactivity(s: Scenario, arg: str, b: Behaviour = DEFAULT_BEHAVIOUR) -> Scenario:
    pairs = {"com-com": (0.0, 0.0), "com-react": (0.0, 1.0), "react-react": (1.0, 1.0)}
    if arg not in pairs:
        raise ConditionError(f"reactivity:{arg}: use one of {', '.join(pairs)}")
    out = _copy(s)
    for p, r in zip(out.parties, pairs[arg], strict=False):
        p.persona.reactivity = r
        p.persona.traits = [
            *p.persona.traits,
            "volatile; escalates when provoked" if r else "calm and composed",
        ]
    return out


def culture(s: Scenario, arg: str, b: Behaviour = DEFAULT_BEHAVIOUR) -> Scenario:
    codes = arg.split("-")
    profiles = hofstede()
    if len(codes) != 2 or any(c not in profiles for c in codes):
        raise ConditionError(
            f"culture:{arg}: use culture:A-B with A and B among {', '.join(profiles)}"
        )
    out = _copy(s)
    for i, p in enumerate(out.parties):
        p.persona.culture = profiles[codes[i % 2]].model_copy()
    return out


def history(s: Scenario, arg: str, b: Behaviour = DEFAULT_BEHAVIOUR) -> Scenario:
    """History x5 without a model: the background's own sentences become dated earlier
    entries ahead of it, so the shared context is about five times longer. (SoCRATES
    had an LLM write the entries from the seed report.)"""
    if arg != "x5":
        raise ConditionError(f"history:{arg}: use history:x5")
    out = _copy(s)
    sentences = [x.strip() for x in (s.history + " " + s.background).split(". ") if x.strip()]
    entries = []
    for k in range(4):
        chunk = sentences[k::4] or sentences
        entries.append(f"Entry {k + 1} (earlier): " + ". ".join(chunk).rstrip(".") + ".")
    out.history = "\n".join([*entries, s.history]).strip()
    return out


def extra_party(s: Scenario, arg: str, b: Behaviour = DEFAULT_BEHAVIOUR) -> Scenario:
    """parties:+1 without a model: an affected third party whose weights average the
    others' and whose first choice on each topic is the option the others rank best on
    average, making it a potential coalition partner on every topic but no one's twin."""
    if arg != "+1":
        raise ConditionError(f"parties:{arg}: use parties:+1")
    if not s.topics:
        # The new party's stake is built from the others' topic weights and rankings.
        raise ConditionError(
            f"parties:+1: {s.id} negotiates numeric terms only, and the added party's stake "
            "is drawn from the topics' weights and rankings; use a scenario with topics"
        )
    out = _copy(s)
    n = len(s.parties)
    raw = {t.id: sum(p.weights[t.id] for p in s.parties) / n for t in s.topics}
    weights = {t: max(1, round(w)) for t, w in raw.items()}
    heaviest = max(weights, key=lambda t: weights[t])
    weights[heaviest] += 100 - sum(weights.values())
    prefs = {}
    for t in s.topics:

        def avg_rank(o: str, tid: str = t.id, worst: int = len(t.options)) -> float:
            ranks = []
            for p in s.parties:
                r = p.preferences[tid].ranking
                ranks.append(r.index(o) if o in r else worst)
            return sum(ranks) / len(ranks)

        order = sorted(t.option_ids(), key=avg_rank)
        prefs[t.id] = TopicPreference(ranking=order[:-1], unacceptable=order[-1:])
    new_id = "third-party" if "third-party" not in {p.id for p in s.parties} else f"party-{n + 1}"
    out.parties.append(
        Party(
            id=new_id,
            name="Ari Lindqvist",
            role="affected stakeholder",
            objective="Protect the interests of those affected by the outcome but not at the "
            "table so far, and help a durable agreement emerge.",
            fallback=Fallback(
                description="Raise objections through formal channels later.", utility=0.35
            ),
            preferences=prefs,
            weights=weights,
            persona=Persona(strategy="compromising"),
        )
    )
    return Scenario.model_validate(out.model_dump())


TWO_STEP = "two-step"
"""The cause argument that asks a writer model for AgentMediation's two steps (choose the
subcategory, then rewrite the brief for it) instead of one call doing both."""


@dataclass(frozen=True)
class CauseArg:
    """`cause:CATEGORY[@INTENSITY][@two-step]`, read."""

    key: str
    intensity: float = 1.0
    two_step: bool = False


def parse_cause(arg: str) -> CauseArg:
    """The parts of a cause argument; ConditionError naming the form when it has none.
    Intensity, 1 by default, is a knob of its own from 0 (no change) to 2, so that a
    cause is never silently also an escalation."""
    key, *rest = arg.split("@")
    keys = [c.key for c in dispute_causes()]
    if key not in keys or len(rest) > 2 or rest.count(TWO_STEP) > 1:
        raise ConditionError(
            f"cause:{arg}: use cause:CATEGORY[@INTENSITY][@{TWO_STEP}], CATEGORY one of "
            f"{', '.join(keys)}"
        )
    two_step = TWO_STEP in rest
    levels = [r for r in rest if r != TWO_STEP]
    try:
        intensity = float(levels[0]) if levels else 1.0
    except ValueError:
        intensity = -1.0
    if len(levels) > 1 or not 0.0 <= intensity <= 2.0:
        raise ConditionError(f"cause:{arg}: intensity must be a number from 0 to 2")
    return CauseArg(key, intensity, two_step)


def cause(s: Scenario, arg: str, b: Behaviour = DEFAULT_BEHAVIOUR) -> Scenario:
    """cause:CATEGORY[@INTENSITY][@two-step] offline: party reactivity and weights shift per
    category (see `disputelab.scenario.causes`). `two-step` only changes how a writer
    model rewrites the brief; the rule agents meet the same cause either way."""
    found = parse_cause(arg)
    return apply_cause_offline(s, found.key, found.intensity, b)


# Level -> (retriever, k): BM25 over a statute corpus ("ek"), or the case's own stored
# retrieval list ("stored", AgentMediation's retrieve_articles), cut to its top k.
EXPERTISE_LEVELS = {
    "none": ("", 0),
    **{f"{r}-top{k}": (r, k) for r in ("ek", "stored") for k in (3, 5, 10)},
}


def expertise(s: Scenario, arg: str, b: Behaviour = DEFAULT_BEHAVIOUR) -> Scenario:
    """expertise:LEVEL: how many retrieved legal bases the mediator receives before it
    proposes (staged protocol), and from which retriever. Retrieval itself runs when the
    episode is set up: `ek` ranks with BM25, so the case's stored list is unset in the
    conditioned copy; `stored` takes the top of that list, which a legal case must have.
    (A scenario with no legal context at all, as the spec's name check uses, gets an empty
    list: the mediator is handed nothing.)"""
    if arg not in EXPERTISE_LEVELS:
        raise ConditionError(f"expertise:{arg}: use one of {', '.join(EXPERTISE_LEVELS)}")
    retriever, k = EXPERTISE_LEVELS[arg]
    if retriever == "stored" and s.legal is not None and s.legal.stored_retrieval is None:
        # BM25 needs a corpus: the case's own legal bases when it has some, else a file.
        corpus = " with a statute corpus (--corpus FILE, or corpus: in a spec)"
        needs = "" if s.legal.legal_bases else corpus
        raise ConditionError(
            f"expertise:{arg}: {s.id} has no stored retrieval list (AgentMediation cases "
            f"carry one as retrieve_articles); use expertise:ek-top{k}{needs}"
        )
    out = _copy(s)
    if out.legal is None:
        out.legal = LegalContext(
            brief=s.background, stored_retrieval=[] if retriever == "stored" else None
        )
    out.legal.retrieval_top_k = k
    if retriever == "ek":
        out.legal.stored_retrieval = None
    return out


def _mode_parameters(mode: str) -> tuple[str, ...]:
    extra = {
        "competing": ("tone.competing_flare",),
        "avoiding": ("avoiding.engage_every",),
        "collaborating": ("logrolling.collaborating", "tone.cooperative_warm"),
        "accommodating": ("tone.cooperative_warm",),
    }
    # The settlement counsel's eagerness is its party's strategy's too.
    own = (f"beta.{mode}", f"self_weight.{mode}", f"settlement.eagerness.{mode}")
    return (*own, *extra.get(mode, ()))


def _none(arg: str) -> tuple[str, ...]:
    return ()


def _posture_moves(arg: str) -> tuple[str, ...]:
    """Every strategy's parameters, not only the new mode's: the condition replaces the
    strategies the scenario gave its parties, so its effect against `general` runs through
    the parameters of the modes it removes as much as through those of the mode it sets."""
    return tuple(name for mode in STRATEGIES for name in _mode_parameters(mode))


def _strategy_composes(earlier: str, later: str) -> bool:
    # Every party first, then one of them in another mode: a mixed table. The other way
    # round, or the same scope twice, the later mode replaces the earlier one; the same
    # mode for one party after all of them changes nothing.
    (mode, _, scope), (then, _, then_scope) = earlier.partition("@"), later.partition("@")
    return scope == "all" and then_scope == "one" and mode != then


def _cause_composes(earlier: str, later: str) -> bool:
    # Causes add their shifts, so two of them describe a dispute with both causes; one
    # cause twice is an intensity, said as cause:KEY@INTENSITY.
    return earlier.partition("@")[0] != later.partition("@")[0]


def _cause_moves(arg: str) -> tuple[str, ...]:
    key = arg.partition("@")[0]
    return cause_parameters(key.partition(".")[0])


_CULTURE = (
    "culture.uncertainty_avoidance",
    "culture.masculinity",
    "culture.long_term_orientation",
    "culture.power_distance",
    "culture.expressiveness",
)
# The bilateral buyer's offence sensitivity is its reactivity times its row.
_REACTIVITY = ("resentment.hostility", "resentment.hurt", "bilateral.offence_per_reactivity")


@dataclass(frozen=True)
class Condition:
    """A scenario transform. `acts_through` names the behaviour parameters by which the
    rule agents turn what it changes into behaviour: the only numbers the condition
    moves, and the ones `ablate:` sets to neutral for it."""

    name: str
    usage: str
    description: str
    apply: Callable[[Scenario, str, Behaviour], Scenario]
    acts_through: Callable[[str], tuple[str, ...]] = _none
    # Whether a later condition of this kind in the same cell (its argument second) adds to
    # an earlier one rather than undoing it; most kinds set something, so never.
    composes: Callable[[str, str], bool] = lambda earlier, later: False
    # What to write instead of a repeat that does not compose, where there is a way.
    instead: str = ""


CONDITIONS: dict[str, Condition] = {
    c.name: c
    for c in (
        Condition(
            "general", "general", "the scenario as written", general, composes=lambda a, b: True
        ),
        Condition(
            "posture",
            "posture:competing|avoiding|accommodating",
            "a Thomas-Kilmann posture in the shared background and every persona",
            posture,
            _posture_moves,
        ),
        Condition(
            "strategy",
            "strategy:MODE|aAcC@one|all",
            "a Thomas-Kilmann mode or point (aAcC, 0-10 each) for one party (drawn from "
            "each episode's seed) or every party",
            strategy,
            _posture_moves,
            _strategy_composes,
        ),
        Condition(
            "strategy_update",
            "strategy_update:adaptive|static",
            "every party's strategy point moves each bargaining round towards the "
            "behaviour it saw from the others (staged)",
            strategy_update,
            lambda arg: ("adaptive.rate",) if arg == "adaptive" else (),
        ),
        Condition("parties", "parties:+1", "one more, structurally distinct party", extra_party),
        Condition("history", "history:x5", "about five times the shared history", history),
        Condition(
            "reactivity",
            "reactivity:com-com|com-react|react-react",
            "composed (r=0) or reactive (r=1) first and second parties",
            reactivity,
            lambda arg: _REACTIVITY,
        ),
        Condition(
            "culture",
            "culture:A-B (A, B in US, CN, KR)",
            "Hofstede profiles for alternating parties",
            culture,
            lambda arg: _CULTURE,
        ),
        Condition(
            "cause",
            "cause:CATEGORY[@INTENSITY][@two-step] (information, resource, misconduct, legal, "
            "external)",
            "a dispute cause from AgentMediation's taxonomy; intensity 0-2, default 1; "
            "two-step: a writer model chooses the subcategory, then rewrites",
            cause,
            _cause_moves,
            _cause_composes,
            "one cause twice is an intensity: cause:CATEGORY@INTENSITY",
        ),
        Condition(
            "expertise",
            "expertise:none|ek-topK|stored-topK (K in 3, 5, 10)",
            "retrieved legal bases handed to the mediator before it proposes (staged): "
            "BM25's top K (ek), or the top K of the case's stored retrieval list (stored)",
            expertise,
            lambda arg: () if arg == "none" else ("legal.cite_retrieved",),
        ),
    )
}

SOCRATES_CONDITIONS = (
    "general",
    "posture:competing",
    "posture:avoiding",
    "posture:accommodating",
    "parties:+1",
    "history:x5",
    "reactivity:com-com",
    "reactivity:com-react",
    "reactivity:react-react",
    "culture:US-US",
    "culture:CN-CN",
    "culture:KR-KR",
    "culture:US-CN",
    "culture:US-KR",
    "culture:CN-KR",
)


def _parts(spec: str, strict: bool = True) -> list[tuple[Condition, str]]:
    """The conditions of `spec`. `strict` (what a user types) refuses an empty one or an
    empty part; otherwise (conditions read back from runs stored before that rule) an
    empty part is left out and an empty condition is general."""
    out = []
    parts = [p.strip() for p in spec.split(",")]
    if not all(parts):
        if strict:  # '' or 'a,,b': a slip, not a quiet 'general'
            raise ConditionError(f"condition {spec!r} is empty or has an empty part; use general")
        parts = [p for p in parts if p] or ["general"]
    for part in parts:
        name, _, arg = part.partition(":")
        if name not in CONDITIONS:
            raise ConditionError(
                f"unknown condition {name!r}; available: "
                + ", ".join(c.usage for c in CONDITIONS.values())
            )
        out.append((CONDITIONS[name], arg))
    return out


def _refuse_repeats(parts: list[tuple[Condition, str]]) -> None:
    """Two conditions of one kind in a cell where the later would silently undo the
    earlier (two postures, two cultures), or repeat it (parties:+1 twice would seat two
    copies of one added party): the cell is refused. Kinds that add up (two causes,
    `general`) pass."""
    for i, (condition, arg) in enumerate(parts):
        for kind, before in parts[:i]:
            if kind is condition and not condition.composes(before, arg):
                instead = f"; {condition.instead}" if condition.instead else ""
                raise ConditionError(
                    f"{kind.name}:{before} and {condition.name}:{arg} in one condition: the "
                    "second would override or repeat the first; keep one of them per cell "
                    f"(list them as separate conditions to compare them){instead}"
                )


def apply_condition(s: Scenario, spec: str, behaviour: Behaviour = DEFAULT_BEHAVIOUR) -> Scenario:
    """Apply `name:arg` conditions joined by ',', left to right. Where there are several,
    each first checks its argument on the scenario as written, so that a malformed part is
    named as such rather than as a clash with an earlier one."""
    parts = _parts(spec)
    if len(parts) > 1:
        for condition, arg in parts:
            condition.apply(s, arg, behaviour)
        _refuse_repeats(parts)
    out = s
    for condition, arg in parts:
        out = condition.apply(out, arg, behaviour)
    return out


def written_problem(spec: str) -> str:
    """Why `spec` cannot be written by a model though it applies offline, or ''. Offline,
    two causes add their persona shifts; a model rewrites the brief around one main
    cause, so a second rewrite would undo the first."""
    causes = [p.strip() for p in spec.split(",") if p.partition(":")[0].strip() == "cause"]
    if len(causes) < 2:
        return ""
    return (
        f"{' and '.join(causes)} with a writer model: it rewrites the brief around one main "
        "cause, so keep one cause per cell (causes add up without a writer model)"
    )


def condition_parameters(spec: str) -> tuple[str, ...]:
    """The behaviour parameters a (composed) condition acts through and moves away from
    neutral, in table order; () for a structural condition such as parties:+1. A
    protocol's agents read some of them only (`protocols.base.behaviour_rows`)."""
    names: set[str] = set()
    for condition, arg in _parts(spec, strict=False):  # stored conditions come here too
        names.update(condition.acts_through(arg))
    return tuple(p.name for p in PARAMETERS.values() if p.name in names and p.default != p.neutral)
