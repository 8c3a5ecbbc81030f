"""Registers the `paraphrase` party kind: rule policy, paraphrase voice, no model."""

from __future__ import annotations

from disputelab.agents.base import PartyAgent
from disputelab.agents.paraphrase.voice import ParaphraseVoice
from disputelab.agents.parties.kinds import general_parties
from disputelab.agents.parties.rule import RuleParty
from disputelab.agents.parties.rule_memos import ReadMemo, RuleMemos
from disputelab.agents.registry import PARTY, AgentKind, AgentSetup, register_kind


def _paraphrase(s: AgentSetup) -> list[PartyAgent]:
    """The rule policy decides (so the oracle holds); the paraphrase voice speaks."""
    reads: ReadMemo = {}
    # The `general` party style plays the policy without styles, as the rule kind does.
    sc = general_parties(s.scenario) if s.settings.party_style == "general" else s.scenario
    b, told, memos = s.settings.behaviour, s.settings.disclosure, s.memos.of(RuleMemos)
    return [
        RuleParty(sc, p.id, s.seed, s.public, reads, b, told, voice=ParaphraseVoice, memos=memos)
        for p in sc.parties
    ]


register_kind(
    AgentKind(
        PARTY,
        "paraphrase",
        "rule policy with a paraphrasing voice that never lists acceptable options (no model)",
        _paraphrase,
        hidden_state=True,
    )
)
