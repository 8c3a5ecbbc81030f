"""What the rule parties of one run share: each profile's candidate packages, and the
memos that spare them recomputing what recurs (readings of stated positions, pooled
stances, worded utilities, rendered phrases).

`RuleMemos` owns them all, and a run owns one `RuleMemos` (through its `AgentMemos`), so
they last as long as the run and no longer. Every memo is bounded by `limit`
(`MEMO_LIMIT` unless a test asks for less) and changes no result: an episode played with
them cold is the one played with them warm, and one played with memos that keep
forgetting is the one played with memos that never do.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from disputelab.agents.parties.voice import PHRASES_LIMIT, PhraseMemo
from disputelab.agents.utility import PreferenceTable, logrolling, self_weight
from disputelab.episode import Stance
from disputelab.memo import ByIdentity
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour
from disputelab.scenario.schema import Strategy
from disputelab.scenario.tki import Point

Package = tuple[int, ...]  # option index per topic, in the scenario's topic order
MEMO_LIMIT = 200_000
# Profiles whose candidates a run keeps at once, as many as the preference tables the
# process keeps (`utility._build_table`).
CANDIDATE_PROFILES = 512
# A public turn as a rule party reads it: the option index each topic's stance backs, the
# support it lends each option, and an id naming what was said (see `read_stances`).
Reading = tuple[tuple[int | None, ...], "npt.NDArray[np.float64]", int]
# Parsed public turns by dialogue index. Parsing depends only on the turn and the
# scenario's option layout, so the rule parties of one episode may share one memo.
ReadMemo = dict[int, Reading]
# Readings by what was said (the stances' items), for one option layout.
LayoutReadings = dict[object, Reading]
# Ids of readings: the one thing the process keeps, a counter rather than a memo, so that
# an id names one reading whichever memos made it. The memo of choices keys on them, and
# the parties of an episode share its readings (`ReadMemo`) even when each was built with
# memos of its own: ids counted per memo owner would then repeat within one party's keys.
_READING_IDS = itertools.count()


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
    limit: int = MEMO_LIMIT  # of each memo below
    # Memos of pure functions of this profile, shared by every episode of the run.
    choices: dict[object, tuple[int, ...]] = field(default_factory=dict)
    stances: dict[object, dict[str, Stance]] = field(default_factory=dict)
    # What a negotiator states, by (its stances' memo key, the concessions it has made).
    public: dict[object, dict[str, Stance]] = field(default_factory=dict)

    def remember(self, memo: dict[Any, Any], key: object, value: Any) -> Any:
        if len(memo) >= self.limit:
            memo.clear()  # crude but bounded; a long experiment never grows without limit
        memo[key] = value
        return value


def strategy_key(strategy: Strategy | Point, b: Behaviour) -> str:
    """What decides a profile's candidates besides its table: the strategy's weight on
    its own utility and how far it logrolls (a mode, or a point on the TKI plane)."""
    return f"{self_weight(strategy, b)!r}:{logrolling(strategy, b)!r}"


def build_candidates(
    table: PreferenceTable,
    strategy: Strategy | Point,
    b: Behaviour = DEFAULT_BEHAVIOUR,
    limit: int = MEMO_LIMIT,
) -> Candidates:
    """A profile's candidates, built afresh (`RuleMemos.candidates` keeps them)."""
    own_weight = self_weight(strategy, b)
    logroll = logrolling(strategy, b)
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
    return Candidates(
        [tuple(int(i) for i in row) for row in table.packages[order]],
        [-float(u) for u in table.utility[order]],
        onehot * follow,
        own_weight * table.utility[order],
        np.cumsum([0] + [len(o) for o in table.option_ids[:-1]]).astype(np.intp),
        {
            tuple(int(i) for i in row): float(u)
            for row, u in zip(table.packages[order], table.utility[order], strict=True)
        },
        limit,
    )


class RuleMemos:
    """Every memo the rule parties of one run share. A run keeps one (see
    `disputelab.agents.memos`); a party built without one gets a fresh one of its own."""

    def __init__(self, limit: int = MEMO_LIMIT) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        # Readings by what was said, per option layout (topic ids, option ids): the same
        # stated positions recur across turns and episodes.
        self._readings: dict[object, LayoutReadings] = {}
        # One instance of each distinct stance the memos hold. A named tuple is never
        # untracked by the garbage collector as a plain tuple of strings is, so tens of
        # thousands of equal copies would be walked by every full collection; shared ones
        # also compare by identity first.
        self._stances: dict[Stance, Stance] = {}
        # A package utility as a thought prints it ("0.5125"), by value: a party's offers
        # are worth one of a few values, and formatting a float costs more than a look-up.
        self._worth_words: dict[float, str] = {}
        # Candidates per preference table (by identity: tables are immutable and shared)
        # and `strategy_key`.
        self._candidates: ByIdentity[Candidates] = ByIdentity(CANDIDATE_PROFILES)
        # The voices' rendered phrases, per set of words (see `Voice._words`), bounded
        # as they always were, below the other memos.
        self.phrases = PhraseMemo(min(limit, PHRASES_LIMIT))

    def sizes(self) -> dict[str, int]:
        """How many entries each memo holds (of memos kept per layout, profile or set of
        words, the fullest), to see that none outgrows `limit`."""
        cands = self._candidates.values()
        return {
            "readings": max((len(r) for r in self._readings.values()), default=0),
            "stances": len(self._stances),
            "worth words": len(self._worth_words),
            "choices": max((len(c.choices) for c in cands), default=0),
            "truthful stances": max((len(c.stances) for c in cands), default=0),
            "stated stances": max((len(c.public) for c in cands), default=0),
            "phrases": self.phrases.fullest(),
        }

    def remember(self, memo: dict[Any, Any], key: object, value: Any) -> Any:
        """Put `value` in `memo` under `key`, emptying `memo` first when it is full."""
        if len(memo) >= self.limit:
            memo.clear()
        memo[key] = value
        return value

    def readings(self, table: PreferenceTable) -> LayoutReadings:
        """The memo of readings for the option layout of `table`."""
        return self._readings.setdefault((table.topic_ids, table.option_ids), {})

    def reading_id(self) -> int:
        """A new id for a new reading, unique in the process (see `_READING_IDS`)."""
        return next(_READING_IDS)

    def shared_stance(self, stance: Stance) -> Stance:
        """The pooled instance equal to `stance`."""
        known = self._stances.get(stance)
        if known is None:
            if len(self._stances) >= self.limit:
                self._stances.clear()
            known = self._stances[stance] = stance
        return known

    def worth_words(self, worth: float) -> str:
        """`f"{worth:.4f}"`, memoised (zero, whose sign the memo could not tell, is not)."""
        words = self._worth_words.get(worth)
        if words is None:
            words = f"{worth:.4f}"
            if worth != 0.0:
                if len(self._worth_words) >= self.limit:
                    self._worth_words.clear()
                self._worth_words[worth] = words
        return words

    def candidates(
        self,
        table: PreferenceTable,
        strategy: Strategy | Point,
        b: Behaviour = DEFAULT_BEHAVIOUR,
    ) -> Candidates:
        """Built once per party profile, strategy and behaviour, then shared by episodes."""
        key = strategy_key(strategy, b)
        known = self._candidates.get(table, key)
        if known is None:
            known = self._candidates.put(
                table, build_candidates(table, strategy, b, self.limit), key
            )
        return known
