"""What a protocol shows of one episode beyond its transcript, for the visual report.

The report draws what every episode has (turns, speakers, per-topic consensus and
stances, usage, scores) by itself. What only a protocol knows comes from its
`episode_view`: the private thoughts behind each turn, public notes on a turn (a
proposal, what a listener heard instead, a verdict), the heading a turn falls under
(a stage), extra panels of text and extra charts over party turns (a settlement
protocol's amounts per round, say). These are plain data: the protocols layer never
imports the report, and the report never tests a protocol's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from disputelab.episode import Episode, Turn


@dataclass(frozen=True)
class PrivateThought:
    """Something an agent thought and did not say."""

    who: str  # a party id or a seat role
    text: str
    note: str = ""  # how it weighed, e.g. its motivation and whether it was voiced


@dataclass(frozen=True)
class TurnView:
    thoughts: tuple[PrivateThought, ...] = ()
    notes: tuple[tuple[str, str], ...] = ()  # public (label, text) lines under the turn
    group: str = ""  # the heading the turn falls under; empty for single-stage protocols


@dataclass(frozen=True)
class Chart:
    """Named lines over party turns: (party turn, value) points per line."""

    title: str
    y_label: str
    lines: Mapping[str, Sequence[tuple[float, float]]] = field(default_factory=dict)


@dataclass(frozen=True)
class EpisodeView:
    turns: tuple[TurnView, ...]  # one per turn of the episode, in order
    panels: tuple[tuple[str, str], ...] = ()  # (heading, text) lines about the episode
    charts: tuple[Chart, ...] = ()


def _package(proposal: Mapping[str, str]) -> str:
    return ", ".join(f"{topic}={option}" for topic, option in proposal.items())


def default_turn_view(turn: Turn) -> TurnView:
    """What any protocol's turn carries: the speaker's own private thought, the package
    a mediator put forward, and the words a listener heard where they differ."""
    thoughts: list[PrivateThought] = []
    notes: list[tuple[str, str]] = []
    if turn.action is not None and turn.action.thought:
        thoughts.append(PrivateThought(turn.speaker, turn.action.thought))
    if turn.intervention is not None:
        if turn.intervention.thought:
            thoughts.append(PrivateThought(turn.speaker, turn.intervention.thought))
        if turn.intervention.proposal:
            notes.append(("proposes", _package(turn.intervention.proposal)))
    for listener, heard in (turn.delivered or {}).items():
        if heard != turn.text:
            notes.append((f"heard by {listener}", heard))
    return TurnView(tuple(thoughts), tuple(notes), turn.stage)


def default_view(
    episode: Episode,
    panels: Sequence[tuple[str, str]] = (),
    extra: Callable[[Turn, TurnView], TurnView] | None = None,
) -> EpisodeView:
    """Every turn's default view, passed through `extra` where a protocol adds its own."""
    views = []
    for turn in episode.turns:
        view = default_turn_view(turn)
        views.append(extra(turn, view) if extra is not None else view)
    return EpisodeView(tuple(views), tuple(panels))


def add_to(
    view: TurnView, thoughts: Sequence[PrivateThought] = (), notes: Sequence[tuple[str, str]] = ()
) -> TurnView:
    """`view` with more thoughts and notes after its own."""
    return replace(view, thoughts=view.thoughts + tuple(thoughts), notes=view.notes + tuple(notes))
