"""Private deliberation for motivated turn-taking (Inner Thoughts, as ProMediate uses it).

A party that `Deliberates` reacts to each new event with a few candidate thoughts, each
rated for how strongly it wants to voice it; the protocol then decides who speaks. Its
`Mind` holds what the thinking draws on:

- short-term memory: the last `RECENT_EVENTS` turns of the dialogue;
- long-term memory: the sentences of the party's own brief, ranked by salience, which is
  the similarity of each to the newest event (sentence embeddings where the `embed`
  extra is installed, a lexical stand-in otherwise);
- the thought reservoir: every thought it has had, also ranked by salience.

Thoughts never enter a `PublicTurn`, so no other agent can see them; the protocol stores
them with the turn for reports.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext
from disputelab.episode import Action, Thought
from disputelab.llm.embedding import Embedder, Embeds
from disputelab.scenario.schema import Party

RECENT_EVENTS = 5  # short-term memory, as in ProMediate
MEMORY_FLOOR = 0.25  # salience below which a memory or thought is not recalled
MEMORIES_RECALLED = 5
THOUGHTS_RECALLED = 3


@runtime_checkable
class Deliberates(Protocol):
    """A party that can take part in motivated turn-taking."""

    party_id: str

    async def think(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, k: int
    ) -> list[Thought]:
        """Up to `k` new thoughts about the latest event, each with its raw motivation
        (1-5, before the silence boost; NaN with a reason when rating failed)."""
        ...

    def most_salient(self) -> Thought | None:
        """The reservoir's thought most related to the latest event (the fallback)."""
        ...

    async def articulate(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, thought: Thought
    ) -> Action:
        """Take the turn by voicing `thought`: the whole typed action."""
        ...


def brief_sentences(public: PublicScenario, party: Party) -> list[str]:
    """The long-term memory: the party's brief split into sentences."""
    parts = [party.objective, party.fallback.description, party.private_notes]
    for t in public.topics:
        pref = party.preferences.get(t.id)
        if pref is None:
            continue
        labels = {o.id: o.label for o in t.options}
        ranked = ", ".join(labels.get(o, o) for o in pref.ranking)
        parts.append(f"{t.name}: I prefer {ranked}.")
        if pref.unacceptable:
            bad = ", ".join(labels.get(o, o) for o in pref.unacceptable)
            parts.append(f"{t.name}: I cannot accept {bad}.")
    out: list[str] = []
    for text in parts:
        for s in re.split(r"(?<=[.!?。！？])\s*|\n+", text):
            s = s.strip(" -*#\t")
            if len(s) > 3 and s not in out:
                out.append(s)
    return out


class Mind:
    """A party's memories and thought reservoir, with salience against the latest event."""

    def __init__(self, memories: Sequence[str], embedder: Embeds) -> None:
        self.embedder = embedder
        self.memories = list(memories)
        self._memory_vectors: npt.NDArray[np.float64] | None = None
        self.thoughts: list[Thought] = []
        # One row per thought, grown by doubling, so that re-ranking the whole reservoir
        # after each event is one matrix-vector product rather than a loop.
        self._thought_vectors: npt.NDArray[np.float64] | None = None
        self.memory_salience: npt.NDArray[np.float64] = np.zeros(len(self.memories))
        self.thought_salience: npt.NDArray[np.float64] = np.zeros(0)
        self._event: npt.NDArray[np.float64] | None = None  # the latest event attended to

    def _local(self) -> Embedder:
        """The in-process embedder the synchronous methods (rule parties') need."""
        assert isinstance(self.embedder, Embedder), "an endpoint's embeddings are awaited"
        return self.embedder

    def _to_embed(self, event: str) -> list[str]:
        """What attending to `event` embeds: the event, and the memories the first time
        (in one batch, for an endpoint)."""
        return [event] + (self.memories if self._memory_vectors is None else [])

    def attend(self, event: str) -> None:
        """Recompute every memory's and thought's salience against `event`."""
        if event.strip():
            self._attended(self._local().vectors(self._to_embed(event)))

    async def attend_async(self, event: str) -> None:
        """`attend`, with the embeddings awaited (an endpoint's, or the model's in a thread)."""
        if event.strip():
            self._attended(await self.embedder.embed(self._to_embed(event)))

    def _attended(self, vectors: npt.NDArray[np.float64]) -> None:
        e = vectors[0]
        self._event = e
        if self._memory_vectors is None:
            self._memory_vectors = vectors[1:]
        if len(self.memories):
            self.memory_salience = self._memory_vectors @ e
        if self._thought_vectors is not None:
            self.thought_salience = self._thought_vectors[: len(self.thoughts)] @ e

    def keep(self, thoughts: Sequence[Thought]) -> None:
        """Add new thoughts to the reservoir, ranked against the latest event like every
        earlier thought, so that an older thought closer to it can still be the most
        salient (the fallback of turn-taking draws on the whole reservoir)."""
        if thoughts:
            self._kept(thoughts, self._local().vectors([t.text for t in thoughts]))

    async def keep_async(self, thoughts: Sequence[Thought]) -> None:
        """`keep`, with the embeddings awaited."""
        if thoughts:
            self._kept(thoughts, await self.embedder.embed([t.text for t in thoughts]))

    def _kept(self, thoughts: Sequence[Thought], vectors: npt.NDArray[np.float64]) -> None:
        n, m = len(self.thoughts), len(thoughts)
        store = self._thought_vectors
        if store is None or n + m > len(store):
            grown = np.zeros((max(8, 2 * (n + m)), vectors.shape[1]))
            if store is not None:
                grown[:n] = store[:n]
            store = self._thought_vectors = grown
        store[n : n + m] = vectors
        self.thoughts.extend(thoughts)
        fresh = vectors @ self._event if self._event is not None else np.ones(m)
        self.thought_salience = np.concatenate([self.thought_salience, fresh])

    def recalled_memories(self, n: int = MEMORIES_RECALLED) -> list[tuple[int, str]]:
        """The `n` most salient memories above the floor, as (number, text)."""
        order = np.argsort(-self.memory_salience, kind="stable")[:n]
        return [
            (int(i), self.memories[i]) for i in order if self.memory_salience[i] >= MEMORY_FLOOR
        ]

    def recalled_thoughts(self, n: int = THOUGHTS_RECALLED) -> list[Thought]:
        """The `n` most salient earlier thoughts above the floor."""
        order = np.argsort(-self.thought_salience, kind="stable")[:n]
        return [self.thoughts[i] for i in order if self.thought_salience[i] >= MEMORY_FLOOR]

    def most_salient(self) -> Thought | None:
        if not self.thoughts:
            return None
        return self.thoughts[int(np.argmax(self.thought_salience))]


def event_text(dialogue: Sequence[PublicTurn], public: PublicScenario) -> str:
    """What a party reacts to: the newest turn, or the case itself before anyone spoke."""
    return dialogue[-1].text if dialogue else f"{public.title}. {public.background}"


def event_tag(dialogue: Sequence[PublicTurn]) -> str:
    return f"CON#{dialogue[-1].turn_index}" if dialogue else "CON#opening"
