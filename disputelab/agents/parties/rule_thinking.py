"""How a rule party decides how much it wants to speak (motivated turn-taking, offline).

Motivation follows the rule policy's own state, so turn-taking is driven by the
negotiation rather than by a fixed cycle:

- `gap`: how far the table's current package falls short of the party's target (0 when
  the table already gives it what it wants, 1 when the package is one it cannot accept);
- `stake`: the weight of the topic a thought is about, against the party's heaviest, for
  topics still open (someone backs another option);
- `agitation`: the party's resentment, scaled by its reactivity;
- a party whose policy would accept what the others all back, and has not yet said so,
  is keen to close (the same test its next turn applies, so the thought and the move
  agree).

The weights below are assumptions of this rule agent, not findings: they decide who
speaks offline, and docs/papers/promediate.md says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Protocol

from disputelab.agents.base import PublicScenario, PublicTurn
from disputelab.agents.parties.rule_memos import Package
from disputelab.agents.parties.rule_policy.choice import PackageChoice
from disputelab.agents.parties.rule_policy.resentment import Backed
from disputelab.agents.thinking import Mind, event_tag
from disputelab.agents.utility import PreferenceTable
from disputelab.episode import Thought


class Thinker(Protocol):
    """What a rule party's thinking reads of its state (`RuleParty` has all of it)."""

    @property
    def party_id(self) -> str: ...
    @property
    def public(self) -> PublicScenario: ...
    @property
    def table(self) -> PreferenceTable: ...
    @property
    def choice(self) -> PackageChoice: ...
    @property
    def backed(self) -> Mapping[str, Backed]: ...
    @property
    def offer(self) -> Package: ...
    @property
    def target(self) -> float: ...
    @property
    def resentment(self) -> float: ...
    @property
    def reactivity(self) -> float: ...
    def would_accept_now(self) -> bool: ...


GAP_WEIGHT = 0.45
STAKE_WEIGHT = 0.35
AGITATION_WEIGHT = 0.20
CLOSE_MOTIVATION = 4.2  # ready to accept what the table backs, and not yet said so
IDLE_MOTIVATION = 1.2  # nothing open that matters: listen


def motivation(gap: float, stake: float, agitation: float) -> float:
    """Raw intrinsic motivation on the 1-5 scale, before the silence boost."""
    drive = GAP_WEIGHT * gap + STAKE_WEIGHT * stake + AGITATION_WEIGHT * agitation
    return round(1.0 + 4.0 * min(1.0, max(0.0, drive)), 1)


def table_package(party: Thinker) -> tuple[int, ...]:
    """Per topic, the option most of the others back (the party's own where none do)."""
    out = []
    for j in range(len(party.table.topic_ids)):
        votes = Counter(b[j] for b in party.backed.values() if b[j] is not None)
        if not votes:
            out.append(party.offer[j])
            continue
        top = max(votes.values())
        leaders = [o for o, c in votes.items() if c == top]
        out.append(
            party.offer[j]
            if party.offer[j] in leaders
            else min(o for o in leaders if o is not None)
        )
    return tuple(out)


_TEXT = {
    "en": {
        "close": "This package works for me; time to say so and settle.",
        "push": "On {topic}, the table leans to {theirs}, but I need {mine}.",
        "hold": "On {topic}, I should keep backing {mine}.",
        "idle": "Nothing here needs me right now; let the others talk.",
    },
    "zh": {
        "close": "这个方案我可以接受，该表态收尾了。",
        "push": "在{topic}上，大家倾向{theirs}，但我需要{mine}。",
        "hold": "在{topic}上，我应该继续支持{mine}。",
        "idle": "现在没什么需要我开口的，先听其他人说。",
    },
}


def rule_thoughts(
    party: Thinker, mind: Mind, dialogue: Sequence[PublicTurn], k: int
) -> list[Thought]:
    """Up to `k` templated thoughts, most pressing first, with motivations from the
    party's state; each is kept in `mind`."""
    t = party.table
    lang = "zh" if party.public.language.startswith("zh") else "en"
    words = _TEXT[lang]
    mind.attend(dialogue[-1].text if dialogue else party.public.background)
    tag = event_tag(dialogue)
    table = table_package(party)
    ok = all(t.ok[j][o] for j, o in enumerate(table))
    worth = party.choice.utility(table) if ok else 0.0
    gap = 1.0 if not ok else max(0.0, party.target - worth) / max(party.target, 1e-9)
    agitation = min(1.0, party.resentment) * party.reactivity
    drafts: list[tuple[float, str, tuple[str, ...]]] = []
    everyone_spoke = len(party.backed) == len(party.public.parties) - 1
    if party.would_accept_now():
        drafts.append((CLOSE_MOTIVATION, words["close"], (tag,)))
    top = max(t.w)
    for j, topic in enumerate(t.topic_ids):
        others = {b[j] for b in party.backed.values()}
        if others == {party.offer[j]} and everyone_spoke:
            continue  # settled at the table: nothing to say about it
        name = party.public.topics[j].name
        labels = [o.label for o in party.public.topics[j].options]
        text = (
            words["push"].format(topic=name, theirs=labels[table[j]], mine=labels[party.offer[j]])
            if table[j] != party.offer[j]
            else words["hold"].format(topic=name, mine=labels[party.offer[j]])
        )
        stake = t.w[j] / top
        drafts.append((motivation(gap, stake, agitation), text, (tag, f"MEM#pref:{topic}")))
    drafts.sort(key=lambda d: -d[0])
    if not drafts:
        drafts.append((IDLE_MOTIVATION, words["idle"], (tag,)))
    event = dialogue[-1].turn_index if dialogue else -1
    thoughts = [
        Thought(
            f"{party.party_id}:{event}:{i}", party.party_id, text, rating, rating, "rule", stimuli
        )
        for i, (rating, text, stimuli) in enumerate(drafts[:k])
    ]
    mind.keep(thoughts)
    return thoughts
