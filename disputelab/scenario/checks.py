"""Checks a scenario can pass and still be unplayable: no option on some topic that every
party would accept, so no run can settle it, however long."""

from __future__ import annotations

from disputelab.scenario.schema import Scenario


def unsettlable(s: Scenario) -> list[str]:
    """Why no run of `s` can settle, one line per reason (none for a playable scenario)."""
    return topics_without_overlap(s)


def topics_without_overlap(s: Scenario) -> list[str]:
    """One line per topic on which the parties' acceptable options never overlap."""
    lines = []
    for topic in s.topics:
        options = [o.id for o in topic.options]
        common = set(options)
        accepts: list[str] = []
        for party in s.parties:
            pref = party.preferences.get(topic.id)
            acceptable = options if pref is None else pref.ranking
            common &= set(acceptable)
            accepts.append(f"{party.id} accepts {', '.join(acceptable) or 'nothing'}")
        if not common:
            lines.append(
                f"topic {topic.id}: no option is acceptable to every party "
                f"({'; '.join(accepts)}), so no run can settle it"
            )
    return lines
