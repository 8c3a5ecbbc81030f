"""The model distiller's reply: one non-empty guidance per finding, in finding order."""

from __future__ import annotations

import pytest

from disputelab.protocols.settlement.agents.llm_memory import (
    Guidance,
    GuidanceReply,
    checked_guidance,
)


def _reply(*pairs: tuple[int, str]) -> GuidanceReply:
    return GuidanceReply(guidance=[Guidance(finding=i, text=t) for i, t in pairs])


def test_the_guidance_comes_back_in_finding_order() -> None:
    assert checked_guidance(_reply((2, "second"), (1, " first ")), 2) == ["first", "second"]


@pytest.mark.parametrize(
    ("pairs", "why"),
    [
        (((1, "a"),), "no guidance for finding 2"),
        (((1, "a"), (1, "b"), (2, "c")), "finding 1 has two"),
        (((1, "a"), (3, "c")), "finding 3 is not one of"),
        (((1, "a"), (2, "   ")), "finding 2: the guidance is blank"),
    ],
)
def test_a_reply_that_misses_or_repeats_a_finding_is_refused(
    pairs: tuple[tuple[int, str], ...], why: str
) -> None:
    with pytest.raises(ValueError, match=why):
        checked_guidance(_reply(*pairs), 2)
