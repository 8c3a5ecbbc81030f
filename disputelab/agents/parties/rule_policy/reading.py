"""What a rule party has read at the table: each other party's latest turn, the options
it backs, the support its stated stances lend each option, and any mediator proposal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from disputelab.agents.base import PublicTurn
from disputelab.agents.parties.rule_memos import (
    Package,
    Reading,
    ReadMemo,
    RuleMemos,
)
from disputelab.agents.parties.rule_policy.resentment import Backed, Resentment
from disputelab.agents.utility import PreferenceTable
from disputelab.episode import Stance


def as_package(table: PreferenceTable, choice: Mapping[str, str]) -> Package | None:
    """A choice of option per topic as option indices; None if a topic has none of its
    options."""
    idx = []
    for j, topic in enumerate(table.topic_ids):
        i = table.index[j].get(choice.get(topic, ""))
        if i is None:
            return None
        idx.append(i)
    return tuple(idx)


def read_stances(table: PreferenceTable, stances: Mapping[str, Stance], reading_id: int) -> Reading:
    """The option index each topic's stance backs, the support it lends each option, and
    `reading_id`.

    Support is half a point for every option a party says it would accept and half for
    the one it backs, laid out over all options end to end.
    """
    t = table
    support = [0.0] * t.n_options
    backed: list[int | None] = []
    base = 0
    for j, topic in enumerate(t.topic_ids):
        s = stances.get(topic)
        index = t.index[j]
        i = None
        if s is not None:
            for o in s.acceptable:
                k = index.get(o)
                if k is not None:
                    support[base + k] += 0.5
            i = index.get(s.option or "")
            if i is not None:
                support[base + i] += 0.5
        backed.append(i)
        base += len(t.option_ids[j])
    return tuple(backed), np.array(support), reading_id


class TableReading:
    """The dialogue as one party has read it, turn by turn as it comes.

    What it reads moves the party's `Resentment`: a mediator's turn calms it, another
    party's hostility or move stirs it. Readings are memoised twice: by dialogue index
    for the parties of one episode (`reads`), and by what was said for the whole run
    (`RuleMemos.readings`), where the same stated positions recur.
    """

    __slots__ = (
        "_memos",
        "_readings",
        "backed",
        "latest",
        "party_id",
        "read_ids",
        "reads",
        "seen",
        "support",
        "table",
    )

    def __init__(
        self,
        table: PreferenceTable,
        party_id: str,
        memos: RuleMemos,
        reads: ReadMemo | None = None,
    ) -> None:
        self.table = table
        self.party_id = party_id
        self.seen = 0  # dialogue entries already read
        # Each other party's latest turn, the options it backs, and the support it lends.
        self.latest: dict[str, PublicTurn] = {}
        self.backed: dict[str, Backed] = {}
        self.support: dict[str, npt.NDArray[np.float64]] = {}
        # The id of each other party's latest reading, in the order of `latest`.
        self.read_ids: dict[str, int] = {}
        self.reads: ReadMemo = reads if reads is not None else {}
        self._memos = memos
        self._readings = memos.readings(table)

    def observe(self, dialogue: Sequence[PublicTurn], mood: Resentment) -> Package | None:
        """Read the turns since the last call, moving `mood`; the last mediator proposal
        among them, as a package (None if none, or one naming an unknown option)."""
        proposal: Package | None = None
        reads, backed_by = self.reads, self.backed
        for turn in dialogue[self.seen :]:
            if turn.role == "mediator":
                mood.calm()
                if turn.proposal:
                    proposal = as_package(self.table, turn.proposal)
            elif turn.role == "party" and turn.speaker != self.party_id:
                parsed = reads.get(turn.turn_index)
                if parsed is None:
                    parsed = reads[turn.turn_index] = self._read(turn.stances)
                backed, support, read_id = parsed
                before = backed_by.get(turn.speaker)
                # Only hostility or a move can stir resentment.
                if turn.tone == "hostile" or before != backed:
                    mood.react(turn.tone == "hostile", before, backed, self.table)
                self.latest[turn.speaker] = turn
                backed_by[turn.speaker] = backed
                self.support[turn.speaker] = support
                self.read_ids[turn.speaker] = read_id
        self.seen = len(dialogue)
        return proposal

    def _read(self, stances: Mapping[str, Stance]) -> Reading:
        """`read_stances`, memoised by what was said for every party of this layout."""
        key = tuple(stances.items())
        known = self._readings.get(key)
        if known is None:
            reading = read_stances(self.table, stances, self._memos.reading_id())
            known = self._memos.remember(self._readings, key, reading)
        return known

    def common_package(self) -> Package | None:
        """The package every other party currently backs, if they all back the same one."""
        backed = iter(self.backed.values())
        pkg = next(backed, None)
        if pkg is None or None in pkg or any(other != pkg for other in backed):
            return None
        return pkg  # type: ignore[return-value]  # no None in it
