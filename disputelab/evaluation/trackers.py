"""Consensus trackers: per-topic consensus after every party turn, S<=t in [0, 1].

- `oracle`: the rule parties' true hidden stances (recorded by the protocol).
- `self-report`: the stances parties state, with no extra calls.
- `topic-localized` (SoCRATES): one judge call per topic reads the whole dialogue, scores
  the turns where the topic moves 1-5, records each party's stance there as one of the
  topic's option ids, and carries both forward. The score gives S<=t; the labels give
  each topic's label agreement (`labels_agree`).
- `per-turn` (ProMediate): per party utterance, extract the speaker's attitude per topic,
  then score its agreement with every other party on the topics it mentioned.

Index 0 is the state before anyone spoke; index t the state after party turn t. A value
that cannot be known is NaN (self-report before every party has spoken; everything when a
judge fails, with the reason kept).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from disputelab.consensus import consensus_by_topic
from disputelab.episode import Episode, Stance, Turn
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message, ModelError
from disputelab.llm.concurrency import each
from disputelab.llm.structured import ask_structured, model_schema
from disputelab.scenario.schema import Scenario

TRACKERS = ("oracle", "self-report", "topic-localized", "per-turn")
LLM_TRACKERS = ("topic-localized", "per-turn")
# 2: the topic-localized judge also records each party's stance as an option id.
RUBRIC_VERSION = "2"
NO_STANCE = "none"  # the label a judge gives a party that has backed no option yet


@dataclass
class Trajectory:
    by_topic: dict[str, list[float]]
    calls: int = 0  # model calls made (cache hits are not calls)
    input_tokens: int = 0
    output_tokens: int = 0
    failure: str | None = None  # why the tracker could not score, if it could not
    cached: int = 0  # requests answered from the response cache
    # topic-localized only: topic -> per state, party id -> option id (None: no stance)
    stances: dict[str, list[dict[str, str | None]]] = field(default_factory=dict)
    # topic-localized only: topic -> per state, 1.0 when `labels_agree`, else 0.0 (the
    # mean over judges when several judged); NaN where the judge failed
    label_agreement: dict[str, list[float]] = field(default_factory=dict)

    def overall(self) -> list[float]:
        topics = list(self.by_topic.values())
        if not topics:
            return []
        return [
            math.nan
            if any(math.isnan(t[i]) for t in topics)
            else sum(t[i] for t in topics) / len(topics)
            for i in range(len(topics[0]))
        ]

    def charge(self, responses: Sequence[ChatResponse]) -> None:
        for r in responses:
            if r.cached:
                self.cached += 1
                continue
            self.calls += 1
            self.input_tokens += r.input_tokens or 0
            self.output_tokens += r.output_tokens or 0


def _nan_trajectory(
    topic_ids: Sequence[str], length: int, why: str, labels: bool = False
) -> Trajectory:
    nan = {t: [math.nan] * length for t in topic_ids}
    agreement = {t: list(v) for t, v in nan.items()} if labels else {}
    return Trajectory(nan, failure=why, label_agreement=agreement)


def labels_agree(labels: Sequence[str | None]) -> bool:
    """Whether the parties agree on a topic by their option labels: every party's latest
    label is one and the same option. A party with no label yet (None) agrees with
    nobody, so a topic nobody has taken a side on is not agreed; nor is one with no
    parties."""
    return bool(labels) and labels[0] is not None and all(x == labels[0] for x in labels)


def oracle(episode: Episode, scenario: Scenario) -> Trajectory:
    topic_ids = [t.id for t in scenario.topics]
    length = episode.party_turns + 1
    if episode.initial_consensus is None:
        return _nan_trajectory(topic_ids, length, "no oracle: some party has no hidden state")
    by_topic = {t: [episode.initial_consensus[t]] for t in topic_ids}
    for turn in episode.turns:
        if turn.role == "party" and turn.consensus is not None:
            for t in topic_ids:
                by_topic[t].append(turn.consensus[t])
    return Trajectory(by_topic)


def self_report(episode: Episode, scenario: Scenario) -> Trajectory:
    """Consensus of the latest stated stances; undefined until every party has spoken."""
    topic_ids = [t.id for t in scenario.topics]
    parties = [p.id for p in scenario.parties]
    latest: dict[str, dict[str, Stance]] = {}
    by_topic: dict[str, list[float]] = {t: [math.nan] for t in topic_ids}
    for turn in episode.turns:
        if turn.role != "party" or turn.action is None:
            continue
        latest[turn.speaker] = turn.action.stances
        if len(latest) < len(parties):
            values = dict.fromkeys(topic_ids, math.nan)
        else:
            values = consensus_by_topic(topic_ids, [latest[p] for p in parties])
        for t in topic_ids:
            by_topic[t].append(values[t])
    return Trajectory(by_topic)


# ---- judge-based trackers -------------------------------------------------------------
class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TopicEvent(_Reply):
    turn: int = Field(ge=1)
    reasoning: str = ""
    # An enum rather than bounds: grammar-constrained backends enforce enums, not ranges.
    score: Literal[1, 2, 3, 4, 5]
    stances: dict[str, str]  # party id -> option id, or NO_STANCE


class TopicReply(_Reply):
    events: list[TopicEvent]


def topic_reply_schema(
    party_ids: Sequence[str], option_ids: Sequence[str], turns: int | None = None
) -> dict[str, Any]:
    """The judge's reply schema for one topic: each located turn's score and every
    party's stance, one of the topic's option ids or NO_STANCE. With `turns` (the
    dialogue's party turns), at most that many events: a small model
    held to the schema by a grammar otherwise repeats events until the token limit."""
    labels = {"type": "string", "enum": [*option_ids, NO_STANCE]}
    event = {
        "type": "object",
        "properties": {
            "turn": {"type": "integer", "minimum": 1},
            "reasoning": {"type": "string", "maxLength": 300},
            "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
            "stances": {
                "type": "object",
                "properties": {p: labels for p in party_ids},
                "required": list(party_ids),
            },
        },
        "required": ["turn", "reasoning", "score", "stances"],
    }
    return {
        "type": "object",
        "properties": {
            "events": {"type": "array", "items": event, **({"maxItems": turns} if turns else {})}
        },
        "required": ["events"],
    }


def checked_topic_reply(
    found: Any, party_ids: Sequence[str], option_ids: Sequence[str]
) -> TopicReply:
    """A judge's reply for one topic, or ValueError naming the first stance that is
    missing or not one of the topic's labels (the judge is then asked again)."""
    reply = TopicReply.model_validate(found)
    allowed = [*option_ids, NO_STANCE]
    for event in reply.events:
        unknown = sorted(set(event.stances) - set(party_ids))
        if unknown:
            raise ValueError(f"turn {event.turn}: stance for unknown party {unknown[0]!r}")
        for party in party_ids:
            label = event.stances.get(party)
            if label is None:
                raise ValueError(f"turn {event.turn}: no stance for party {party!r}")
            if label not in allowed:
                raise ValueError(
                    f"turn {event.turn}: party {party!r} has stance {label!r}, not one of "
                    f"{', '.join(allowed)}"
                )
    return reply


class AttitudeReply(_Reply):
    attitudes: dict[str, str]


class AgreementReply(_Reply):
    reasoning: str = ""
    shared_goals: float = Field(ge=0, le=1)
    common_understanding: float = Field(ge=0, le=1)
    agreement_on_terms: float = Field(ge=0, le=1)
    tone_and_willingness: float = Field(ge=0, le=1)
    shared_decision_making: float = Field(ge=0, le=1)

    def overall(self) -> float:
        parts = (
            self.shared_goals,
            self.common_understanding,
            self.agreement_on_terms,
            self.tone_and_willingness,
            self.shared_decision_making,
        )
        return float(sum(parts)) / len(parts)


def _numbered_dialogue(episode: Episode, scenario: Scenario) -> str:
    names = {p.id: p.name for p in scenario.parties}
    lines = []
    for turn in episode.turns:
        if turn.role == "party":
            lines.append(f"[turn {turn.party_turn}] {names.get(turn.speaker)}: {turn.text}")
        else:
            lines.append(f"[after turn {turn.party_turn}] Mediator: {turn.text}")
    return "\n".join(lines)


def _topic_text(scenario: Scenario, topic_id: str) -> str:
    t = scenario.topic(topic_id)
    return f"{t.name}: " + "; ".join(f"{o.id}) {o.label}" for o in t.options)


_LOCALIZED = (
    "You are judging how much the parties agree on one topic of a negotiation, turn by turn."
    "\nTopic: {topic}\nParties (id = name): {parties}\n\nDialogue:\n{dialogue}\n\n"
    "List only the turns where this topic is discussed or a party's position on it moves. "
    "For each, reason briefly, then score the agreement on this topic right after that turn: "
    "1 = opposed positions, no movement; 2 = some movement, still far apart; 3 = one option "
    "looks acceptable to some but not all; 4 = nearly agreed, details open; 5 = every party "
    "accepts the same option. Also give every party's stance right after that turn, keyed "
    "by party id: the id of the option it backs ({labels}), or '{none}' if it backs none "
    "yet. Use the turn numbers shown in brackets."
)

_ATTITUDE = (
    "Negotiation topics:\n{topics}\n\nWhat does this utterance say about the speaker's "
    "position on each topic? Answer per topic id with a short phrase, or 'no mention'.\n"
    "{speaker}: {text}"
)

_AGREEMENT = (
    "Topic: {topic}\n{a}'s current position: {pa}\n{b}'s current position: {pb}\n\n"
    "Score how far these two parties agree on this topic, each dimension from 0 to 1: "
    "shared goals, common understanding of the problem, agreement on terms, tone and "
    "willingness to compromise, shared decision making. Reason first. If either position "
    "is 'no mention', score every dimension 0."
)


async def topic_localized(episode: Episode, scenario: Scenario, judge: ChatModel) -> Trajectory:
    """SoCRATES: one judge pass per topic; located scores and stances carried forward,
    scores remapped (r-1)/4, stances read for label agreement."""
    topic_ids = [t.id for t in scenario.topics]
    length = episode.party_turns + 1
    dialogue = _numbered_dialogue(episode, scenario)
    out = Trajectory({})

    async def judged(topic_id: str) -> TopicReply:
        try:
            return await _judge_topic(
                judge, scenario, topic_id, dialogue, out, episode.party_turns or None
            )
        except ModelError as exc:
            raise ModelError(f"judge failed on {topic_id}: {exc}") from exc

    # Each topic's pass reads the same dialogue and none reads another's: they go out
    # together, and the first failing topic in order decides, as it would one by one.
    try:
        replies = await each(judged, topic_ids)
    except ModelError as exc:
        return _nan_trajectory(topic_ids, length, str(exc), labels=True)
    for topic_id, reply in zip(topic_ids, replies, strict=True):
        scores, stances = _carried_forward(reply, [p.id for p in scenario.parties], length)
        out.by_topic[topic_id] = scores
        out.stances[topic_id] = stances
        out.label_agreement[topic_id] = [
            1.0 if labels_agree(list(s.values())) else 0.0 for s in stances
        ]
    return out


async def _judge_topic(
    judge: ChatModel,
    scenario: Scenario,
    topic_id: str,
    dialogue: str,
    out: Trajectory,
    turns: int | None = None,
) -> TopicReply:
    """One judge pass over the dialogue (of `turns` party turns) for one topic, charged
    to `out`."""
    party_ids = [p.id for p in scenario.parties]
    option_ids = [o.id for o in scenario.topic(topic_id).options]
    prompt = _LOCALIZED.format(
        topic=_topic_text(scenario, topic_id),
        parties=", ".join(f"{p.id} = {p.name}" for p in scenario.parties),
        dialogue=dialogue,
        labels=", ".join(option_ids),
        none=NO_STANCE,
    )
    request = ChatRequest(
        (Message("user", prompt),),
        temperature=0.0,
        max_tokens=1200,
        schema=topic_reply_schema(party_ids, option_ids, turns),
        schema_name="topic_events",
    )
    reply, responses = await ask_structured(
        judge, request, lambda found: checked_topic_reply(found, party_ids, option_ids)
    )
    out.charge(responses)
    return reply


def _carried_forward(
    reply: TopicReply, party_ids: Sequence[str], length: int
) -> tuple[list[float], list[dict[str, str | None]]]:
    """Per state 0..length-1: the latest located score, remapped to [0, 1], and each
    party's latest located stance. Before a topic's first located turn the score is 1 (no
    agreement, SoCRATES choice) and no party has a stance. Events past the dialogue are
    dropped; a turn located twice keeps its last event."""
    located = {e.turn: e for e in reply.events if 1 <= e.turn < length}
    score = 1
    stance: dict[str, str | None] = dict.fromkeys(party_ids)
    scores: list[float] = []
    stances: list[dict[str, str | None]] = []
    for t in range(length):
        event = located.get(t)
        if event is not None:
            score = event.score
            stance = {
                p: None if event.stances[p] == NO_STANCE else event.stances[p] for p in party_ids
            }
        scores.append((score - 1) / 4)
        stances.append(dict(stance))
    return scores, stances


def preference_attitudes(scenario: Scenario) -> dict[str, dict[str, str]]:
    """Each party's starting attitude per topic, written from its ranking (ProMediate
    starts from the preference profiles)."""
    out: dict[str, dict[str, str]] = {}
    for p in scenario.parties:
        out[p.id] = {}
        for t in scenario.topics:
            pref = p.preferences[t.id]
            text = "prefers " + " over ".join(t.option(o).label for o in pref.ranking)
            if pref.unacceptable:
                text += "; rejects " + ", ".join(t.option(o).label for o in pref.unacceptable)
            out[p.id][t.id] = text
    return out


async def per_turn(
    episode: Episode, scenario: Scenario, judge: ChatModel, from_preferences: bool = True
) -> Trajectory:
    """ProMediate: attitudes per utterance, pairwise agreement on the topics mentioned.

    With `from_preferences` (the paper's setting) the state at t = 0 scores every pair on
    every topic from the parties' preference profiles, K x C(P, 2) extra calls; without
    it every attitude starts as 'no mention' and every pair at 0."""
    state = _PairwiseState.unmentioned(scenario)
    out = Trajectory({t: [0.0] for t in state.topic_ids})
    try:
        if from_preferences:
            await _score_preferences(judge, scenario, state, out)
        for turn in episode.turns:
            if turn.role != "party":
                continue  # mediator lines carry the previous state forward
            await _score_utterance(judge, scenario, state, turn, out)
            for t in state.topic_ids:
                out.by_topic[t].append(state.mean(t))
    except ModelError as exc:
        return _nan_trajectory(state.topic_ids, episode.party_turns + 1, f"judge failed: {exc}")
    return out


@dataclass
class _PairwiseState:
    """What `per_turn` carries from one utterance to the next: each party's latest
    attitude per topic and each pair's latest agreement score per topic."""

    topic_ids: list[str]
    names: dict[str, str]  # party id -> name, as the prompts show it
    pairs: list[tuple[str, str]]
    attitude: dict[str, dict[str, str]]  # party id -> topic id -> attitude
    pair_score: dict[tuple[str, str, str], float]  # (a, b, topic id) -> agreement
    topics: str  # the topic list the attitude prompt shows

    @classmethod
    def unmentioned(cls, scenario: Scenario) -> _PairwiseState:
        """Before anyone speaks: every attitude 'no mention', every pair at 0."""
        topic_ids = [t.id for t in scenario.topics]
        names = {p.id: p.name for p in scenario.parties}
        pairs = list(itertools.combinations([p.id for p in scenario.parties], 2))
        return cls(
            topic_ids=topic_ids,
            names=names,
            pairs=pairs,
            attitude={p: dict.fromkeys(topic_ids, "no mention") for p in names},
            pair_score={(a, b, t): 0.0 for a, b in pairs for t in topic_ids},
            topics="\n".join(f"- {t}: {_topic_text(scenario, t)}" for t in topic_ids),
        )

    def mean(self, topic: str) -> float:
        """The topic's consensus: the mean agreement over pairs (0 with fewer than two
        parties)."""
        return sum(self.pair_score[(a, b, topic)] for a, b in self.pairs) / max(1, len(self.pairs))


async def _score_preferences(
    judge: ChatModel, scenario: Scenario, state: _PairwiseState, out: Trajectory
) -> None:
    """The state at t = 0 from the preference profiles: every pair on every topic."""
    state.attitude = preference_attitudes(scenario)
    # Every pair on every topic reads the fixed profiles only: all the calls go out
    # together, kept in the (topic, pair) order they were made in one by one.
    keys = [(a, b, t) for t in state.topic_ids for a, b in state.pairs]
    await _rescore(judge, scenario, state, keys, out)
    for t in state.topic_ids:
        out.by_topic[t][0] = state.mean(t)


async def _score_utterance(
    judge: ChatModel, scenario: Scenario, state: _PairwiseState, turn: Turn, out: Trajectory
) -> None:
    """Read the speaker's attitude per topic from one party turn, then re-score the
    speaker's pairs on the topics it mentioned; the other pairs keep their scores."""
    request = ChatRequest(
        (
            Message(
                "user",
                _ATTITUDE.format(
                    topics=state.topics, speaker=state.names[turn.speaker], text=turn.text
                ),
            ),
        ),
        temperature=0.0,
        max_tokens=300,
        schema=_attitude_schema(state.topic_ids),
        schema_name="attitudes",
    )
    reply, responses = await ask_structured(judge, request, AttitudeReply.model_validate)
    out.charge(responses)
    mentioned = [
        t
        for t in state.topic_ids
        if reply.attitudes.get(t, "").strip().lower() not in ("", "no mention")
    ]
    for t in mentioned:
        state.attitude[turn.speaker][t] = reply.attitudes[t]
    # The speaker's pairs on the topics it mentioned read the attitudes just set and no
    # other pair's score: they go out together.
    keys = [(a, b, t) for t in mentioned for a, b in state.pairs if turn.speaker in (a, b)]
    await _rescore(judge, scenario, state, keys, out)


async def _rescore(
    judge: ChatModel,
    scenario: Scenario,
    state: _PairwiseState,
    keys: Sequence[tuple[str, str, str]],
    out: Trajectory,
) -> None:
    """Score the (a, b, topic) `keys` from the attitudes as they stand, all together."""

    async def scored(key: tuple[str, str, str]) -> float:
        a, b, t = key
        return await _agreement(judge, scenario, t, state.names, state.attitude, a, b, out)

    for key, score in zip(keys, await each(scored, keys), strict=True):
        state.pair_score[key] = score


async def _agreement(
    judge: ChatModel,
    scenario: Scenario,
    topic: str,
    names: dict[str, str],
    attitude: dict[str, dict[str, str]],
    a: str,
    b: str,
    out: Trajectory,
) -> float:
    prompt = _AGREEMENT.format(
        topic=_topic_text(scenario, topic),
        a=names[a],
        b=names[b],
        pa=attitude[a][topic],
        pb=attitude[b][topic],
    )
    request = ChatRequest(
        (Message("user", prompt),),
        temperature=0.0,
        max_tokens=300,
        schema=model_schema(AgreementReply),
        schema_name="agreement",
    )
    reply, responses = await ask_structured(judge, request, AgreementReply.model_validate)
    out.charge(responses)
    return reply.overall()


def _attitude_schema(topic_ids: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "attitudes": {
                "type": "object",
                "properties": {t: {"type": "string", "maxLength": 120} for t in topic_ids},
                "required": list(topic_ids),
            }
        },
        "required": ["attitudes"],
    }


async def track(
    name: str, episode: Episode, scenario: Scenario, judges: Sequence[ChatModel] = ()
) -> Trajectory:
    """Run a tracker by name; several judges are combined by the mean of their scores."""
    if name == "oracle":
        return oracle(episode, scenario)
    if name == "self-report":
        return self_report(episode, scenario)
    if name not in LLM_TRACKERS:
        raise ValueError(f"unknown tracker {name!r}; available: {', '.join(TRACKERS)}")
    if not judges:
        raise ValueError(f"tracker {name!r} needs a judge model: give `judges`")
    runs = [
        await (topic_localized if name == "topic-localized" else per_turn)(episode, scenario, j)
        for j in judges
    ]
    return _mean_of(runs)


def _mean_of(runs: Sequence[Trajectory]) -> Trajectory:
    """Several judges' trajectories as one: scores and label agreement averaged per
    state; the stances themselves are one judge's word and are not combined."""
    if len(runs) == 1:
        return runs[0]
    failures = [r.failure for r in runs if r.failure]
    return Trajectory(
        _mean_by_topic([r.by_topic for r in runs]),
        sum(r.calls for r in runs),
        sum(r.input_tokens for r in runs),
        sum(r.output_tokens for r in runs),
        "; ".join(failures) or None,
        sum(r.cached for r in runs),
        label_agreement=_mean_by_topic([r.label_agreement for r in runs]),
    )


def _mean_by_topic(values: Sequence[dict[str, list[float]]]) -> dict[str, list[float]]:
    if not values or any(not v for v in values):
        return {}
    return {
        t: [sum(v[t][i] for v in values) / len(values) for i in range(len(values[0][t]))]
        for t in values[0]
    }


@dataclass
class OracleFit:
    """How a tracker compares with the oracle over a set of episodes."""

    trajectory_r: float
    outcome_r: float
    mae: float
    points: int
    episodes: int
    calls_per_episode: float
    tokens_per_episode: float
    failures: list[str] = field(default_factory=list)
