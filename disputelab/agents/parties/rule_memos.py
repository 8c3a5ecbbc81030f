"""What rule parties share across episodes: each profile's candidate packages, and the
memos that spare them recomputing what recurs (readings of stated positions, pooled
stances, worded utilities). Every memo is bounded by `MEMO_LIMIT` and changes no result:
an episode played with them cold is the one played with them warm."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from disputelab.agents.utility import PreferenceTable, self_weight
from disputelab.episode import Stance
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour
from disputelab.scenario.schema import Strategy

Package = tuple[int, ...]  # option index per topic, in the scenario's topic order
MEMO_LIMIT = 200_000
# A public turn as a rule party reads it: the option index each topic's stance backs, the
# support it lends each option, and an id naming what was said (see `RuleParty._read_stances`).
Reading = tuple[tuple[int | None, ...], "npt.NDArray[np.float64]", int]
# Parsed public turns by dialogue index. Parsing depends only on the turn and the
# scenario's option layout, so the rule parties of one episode may share one memo.
ReadMemo = dict[int, Reading]
# Readings by what was said, per option layout (topic ids, option ids), shared by every
# episode: the same stated positions recur across turns and episodes.
READINGS: dict[object, dict[object, Reading]] = {}
# Ids of readings, unique across layouts and memo resets, so an id names one reading.
READING_IDS = itertools.count()
# One instance of each distinct stance the memos below hold. A named tuple is never
# untracked by the garbage collector as a plain tuple of strings is, so tens of thousands
# of equal copies would be walked by every full collection; shared ones also compare by
# identity first.
STANCES: dict[Stance, Stance] = {}


# A package utility as its thought prints it ("0.5125"), by value: a party's offers are
# worth one of a few values, and formatting a float costs more than looking it up.
WORTH_WORDS: dict[float, str] = {}


def worth_words(worth: float) -> str:
    """`f"{worth:.4f}"`, memoised (zero, whose sign the memo could not tell, is not)."""
    words = WORTH_WORDS.get(worth)
    if words is None:
        words = f"{worth:.4f}"
        if worth != 0.0:
            if len(WORTH_WORDS) >= MEMO_LIMIT:
                WORTH_WORDS.clear()
            WORTH_WORDS[worth] = words
    return words


def shared_stance(stance: Stance) -> Stance:
    """The pooled instance equal to `stance`."""
    known = STANCES.get(stance)
    if known is None:
        if len(STANCES) >= MEMO_LIMIT:
            STANCES.clear()
        known = STANCES[stance] = stance
    return known


@dataclass(frozen=True)
class Candidates:
    """A party's feasible packages by falling utility, with the fixed part of their score.

    Packages worth at least the target are then always a prefix, and scoring them against
    public support is one matrix-vector product per turn.
    """

    packages: list[tuple[int, ...]]
    utility_desc: list[float]  # negated utilities, ascending, for bisect
    onehot: npt.NDArray[np.float64]  # (F, n_options), scaled by how much to follow others
    own_term: npt.NDArray[np.float64]
    offsets: npt.NDArray[np.intp]  # where each topic's options start in the flat layout
    utility_of: dict[tuple[int, ...], float]  # every feasible package's utility
    # Memos of pure functions of this profile, shared by every episode that uses it.
    choices: dict[object, tuple[int, ...]] = field(default_factory=dict)
    stances: dict[object, dict[str, Stance]] = field(default_factory=dict)
    # What a negotiator states, by (its stances' memo key, the concessions it has made).
    public: dict[object, dict[str, Stance]] = field(default_factory=dict)

    def remember(self, memo: dict[Any, Any], key: object, value: Any) -> Any:
        if len(memo) >= MEMO_LIMIT:
            memo.clear()  # crude but bounded; a long experiment never grows without limit
        memo[key] = value
        return value


def candidates(
    table: PreferenceTable, strategy: Strategy, b: Behaviour = DEFAULT_BEHAVIOUR
) -> Candidates:
    """Built once per party profile, strategy and behaviour, then shared by episodes."""
    own_weight = self_weight(strategy, b)
    logroll = b["logrolling.collaborating"] if strategy == "collaborating" else 0.0
    key = f"{strategy}:{own_weight!r}:{logroll!r}"
    cached = table.cache.get(key)
    if isinstance(cached, Candidates):
        return cached
    feasible = np.flatnonzero(table.feasible)
    order = feasible[np.argsort(-table.utility[feasible], kind="stable")]
    top = max(table.w)
    # Collaborators follow others most on the topics that matter least to them.
    follow = np.repeat(
        [1.0 + logroll * (0.5 - w / top) for w in table.w],
        [len(o) for o in table.option_ids],
    )
    onehot = np.zeros((len(order), table.n_options))
    np.put_along_axis(onehot, table.flat[order], 1.0, axis=1)
    result = Candidates(
        [tuple(int(i) for i in row) for row in table.packages[order]],
        [-float(u) for u in table.utility[order]],
        onehot * follow,
        own_weight * table.utility[order],
        np.cumsum([0] + [len(o) for o in table.option_ids[:-1]]).astype(np.intp),
        {
            tuple(int(i) for i in row): float(u)
            for row, u in zip(table.packages[order], table.utility[order], strict=True)
        },
    )
    table.cache[key] = result
    return result
