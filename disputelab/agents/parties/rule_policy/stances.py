"""What a rule party would accept, and what it says of it: its truthful stances on the
package it stands on (`Stances`), what it states in the open under each disclosure
setting (`OpenStances`), and what it names to the mediator alone (`Caucus`)."""

from __future__ import annotations

import random

from disputelab.agents.parties.rule_memos import Candidates, Package, RuleMemos
from disputelab.agents.parties.rule_policy.choice import TOLERANCE
from disputelab.agents.utility import PreferenceTable
from disputelab.episode import Stance
from disputelab.scenario.behaviour import Behaviour


class Stances:
    """Its truthful stances: per topic, the option of the package it stands on and
    every option that keeps that package worth its target (only the option itself when
    dug in). These are what the oracle reads."""

    __slots__ = ("_memos", "cand", "current", "key", "table")

    def __init__(self, table: PreferenceTable, cand: Candidates, memos: RuleMemos) -> None:
        self.table = table
        self.cand = cand
        self._memos = memos
        self.current: dict[str, Stance] = {}  # memoised and shared: copy before handing out
        self.key: object = None  # the memo key of `current`

    def take(self, pkg: Package, dug_in: bool, prefix: int, target: float, own: float) -> None:
        """Stand on `pkg`, worth `own`, at `target`, which admits `prefix` candidates."""
        # Which options keep a package worth the target depends on the target only through
        # which candidates it admits, so (package, dug in, prefix) decides the stances.
        key = (pkg, dug_in, prefix)
        known = self.cand.stances.get(key)
        if known is None:
            known = self.cand.remember(self.cand.stances, key, self._for(pkg, dug_in, target, own))
        self.current = known
        self.key = key

    def _for(self, pkg: Package, dug_in: bool, target: float, own: float) -> dict[str, Stance]:
        t = self.table
        shared = self._memos.shared_stance
        floor = target - TOLERANCE
        out: dict[str, Stance] = {}
        for j, topic in enumerate(t.topic_ids):
            opts = t.option_ids[j]
            chosen = opts[pkg[j]]
            if dug_in:
                out[topic] = shared(Stance(chosen, (chosen,)))
                continue
            w = t.w[j]
            rest = own - w * t.v[j][pkg[j]]
            # Acceptable options are the best-ranked ones down to the first that would drop
            # the package below target; count them, then look the set up.
            count = 0
            for value in t.ranked_values[j]:
                if rest + w * value < floor:
                    break
                count += 1
            out[topic] = shared(Stance(chosen, t.top_sets[j][count]))
        return out


class OpenStances:
    """What it states at the table. With `full` disclosure, its truthful stances. As a
    negotiator, per topic, the option it backs and the concessions it has made in the
    open (options it once backed or accepted) that it would still take: its acceptable
    set stays private, and nothing it states is false."""

    __slots__ = ("_last", "_memos", "cand", "conceded", "full", "key", "table")

    def __init__(
        self, table: PreferenceTable, cand: Candidates, memos: RuleMemos, full: bool
    ) -> None:
        self.table = table
        self.cand = cand
        self._memos = memos
        self.full = full
        # Per topic, the options it has backed so far, in the order it first backed them.
        # `key` is the same as a tuple of tuples, kept for the memo of what it states.
        self.conceded: list[dict[str, None]] = [{} for _ in table.topic_ids]
        self.key: tuple[tuple[str, ...], ...] = tuple(() for _ in self.conceded)
        self._last: Package | None = None  # the package `concede` noted last

    def concede(self, pkg: Package) -> None:
        """Note each option of a package it backs or accepts: a concession made in the open."""
        if pkg == self._last:
            return  # every option of it is noted already
        self._last = pkg
        grew = False
        option_ids = self.table.option_ids
        for j, i in enumerate(pkg):
            made = self.conceded[j]
            option = option_ids[j][i]
            if option not in made:
                made[option] = None
                grew = True
        if grew:
            self.key = tuple(tuple(made) for made in self.conceded)

    def stated(self, truth: Stances) -> dict[str, Stance]:
        """What it states now, standing where `truth` says (a copy it may keep)."""
        if self.full:
            return dict(truth.current)
        # A pure function of its stances and its concessions, which recur turn after turn
        # and across episodes: memoised on the candidates, and copied out.
        key = (truth.key, self.key)
        known = self.cand.public.get(key)
        if known is None:
            known = self.cand.remember(self.cand.public, key, self._negotiator(truth.current))
        return dict(known)

    def _negotiator(self, truth: dict[str, Stance]) -> dict[str, Stance]:
        """Per topic, the option it backs and the concessions it made that it would still
        take (the option it backs first when it is not one of them)."""
        shared = self._memos.shared_stance
        out: dict[str, Stance] = {}
        for j, (topic, s) in enumerate(truth.items()):
            still = set(s.acceptable)
            made = tuple(o for o in self.conceded[j] if o in still)
            if s.option is not None and s.option not in made:
                made = (s.option, *made)
            out[topic] = shared(Stance(s.option, made))
        return out

    def rejections(self, refused: Package, truth: dict[str, Stance]) -> list[tuple[str, str]]:
        """As a negotiator, the (topic, option) pairs of a mediator's package it turned
        down that it would not take now: the reasons it gives in the open. Full disclosure
        names none (its acceptable set already shows them)."""
        if self.full:
            return []
        out = []
        for j, topic in enumerate(self.table.topic_ids):
            option = self.table.option_ids[j][refused[j]]
            if option not in truth[topic].acceptable:
                out.append((topic, option))
        return out


class Caucus:
    """What it names to the mediator alone.

    Per topic, of the acceptable options it has not conceded in the open, it names a
    share `disclosure.caucus_share` (rounded); each named option is one it would take
    with chance `disclosure.caucus_truthfulness`, otherwise a bluff: an option it would
    not take (a true one where it would take every option). Caucus draws have a random
    stream of their own, so holding caucuses never changes its moves at the table.
    """

    __slots__ = ("_rng", "_seed", "share", "truth")

    def __init__(self, b: Behaviour, seed: str) -> None:
        # Shares and chances outside [0, 1] mean all or nothing.
        self.share = min(1.0, max(0.0, b["disclosure.caucus_share"]))
        self.truth = min(1.0, max(0.0, b["disclosure.caucus_truthfulness"]))
        self._seed = seed
        self._rng: random.Random | None = None  # seeded on first use: most episodes hold none

    @property
    def rng(self) -> random.Random:
        if self._rng is None:
            self._rng = random.Random(self._seed)
        return self._rng

    def named(
        self, table: PreferenceTable, truth: dict[str, Stance], stated: dict[str, Stance]
    ) -> dict[str, Stance]:
        """Per topic, the option it backs and the options it names."""
        rng = self.rng
        share, chance = self.share, self.truth
        named: dict[str, Stance] = {}
        for j, topic in enumerate(table.topic_ids):
            s = truth[topic]
            true = [o for o in s.acceptable if o not in stated[topic].acceptable]
            false = [o for o in table.option_ids[j] if o not in s.acceptable]
            rng.shuffle(true)
            rng.shuffle(false)
            said: list[str] = []
            for _ in range(round(share * len(true))):
                pool = false if false and rng.random() >= chance else true
                said.append(pool.pop())
            named[topic] = Stance(s.option, tuple(said))
        return named
