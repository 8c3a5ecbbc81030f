"""cause:CATEGORY with a model: a subcategory is chosen, the brief rewritten, and the
persona shift applied as offline; intensity is its own knob."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from disputelab.authoring.scenario_writer import apply_condition_with_model
from disputelab.llm.base import ModelReplyError
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.scenario.conditions import ConditionError, apply_condition
from tests.helpers import scenario

BRIEF = "Mira withheld half the rent after the landlord ignored the mould for months."


def _prompt(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], ensure_ascii=False)


def _write(tmp_path: Path, url: str, spec: str) -> Any:
    model = ModelHub(tmp_path / "cache.sqlite").model(f"openai:m@{url}", "writer")
    return asyncio.run(apply_condition_with_model(scenario("tenancy"), spec, model))


def test_the_brief_is_rewritten_and_the_persona_shift_still_applies(tmp_path: Path) -> None:
    reply = {"subcategory": "misconduct.bad_faith", "brief": BRIEF}
    with fake_openai(lambda body: Scripted(content=json.dumps(reply))) as server:
        out = _write(tmp_path, server.url, "cause:misconduct")
        prompt = _prompt(server.requests[0])
    offline = apply_condition(scenario("tenancy"), "cause:misconduct")
    assert out.background == BRIEF
    assert [p.persona.reactivity for p in out.parties] == [
        p.persona.reactivity for p in offline.parties
    ]
    assert "Keep the emotional intensity" in prompt
    assert "misconduct.bad_faith" in prompt  # the subcategories are offered by key


def test_intensity_is_a_separate_knob(tmp_path: Path) -> None:
    reply = {"subcategory": "resource.economic", "brief": BRIEF}
    with fake_openai(lambda body: Scripted(content=json.dumps(reply))) as server:
        _write(tmp_path, server.url, "cause:resource@1.5")
        assert "noticeably more heated" in _prompt(server.requests[0])
        before = len(server.requests)
        out = _write(tmp_path, server.url, "cause:resource@0")
        assert len(server.requests) == before  # intensity 0: no rewrite, no call
    assert out == apply_condition(scenario("tenancy"), "cause:resource@0")


def test_a_subcategory_outside_the_category_is_re_asked_then_fails_in_one_line(
    tmp_path: Path,
) -> None:
    reply = {"subcategory": "legal.unclear_rules", "brief": BRIEF}  # not a misconduct subcategory
    with fake_openai(lambda body: Scripted(content=json.dumps(reply))) as server:
        with pytest.raises(ModelReplyError) as caught:
            _write(tmp_path, server.url, "cause:misconduct")
        assert len(server.requests) == 3  # the first try and two re-asks
    message = str(caught.value)
    assert message.startswith("cause:misconduct: ") and "\n" not in message


def test_two_causes_are_refused_with_a_writer_before_any_call(tmp_path: Path) -> None:
    # Offline the two causes add up; a model would rewrite the brief around each in turn.
    with fake_openai(lambda body: Scripted(content="{}")) as server:
        with pytest.raises(ConditionError, match="keep one cause per cell"):
            _write(tmp_path, server.url, "cause:legal,cause:resource")
        assert server.requests == []


def _two_step_replies(body: dict[str, Any]) -> Scripted:
    """The first step's reply names a subcategory; the second's is the rewritten brief."""
    if body["response_format"]["json_schema"]["name"] == "cause_subcategory":
        reply = {"subcategory": "misconduct.bad_faith", "reason": "promises were broken"}
    else:
        reply = {"brief": BRIEF}
    return Scripted(content=json.dumps(reply))


def test_two_step_chooses_the_subcategory_then_rewrites_for_the_one_chosen(
    tmp_path: Path,
) -> None:
    with fake_openai(_two_step_replies) as server:
        out = _write(tmp_path, server.url, "cause:misconduct@two-step")
        choose, rewrite = (_prompt(r) for r in server.requests)
    assert out.background == BRIEF and len(server.requests) == 2
    assert "misconduct.bad_faith" in choose and "Rewrite" not in choose
    # The rewrite is told the subcategory chosen, in words, not offered the list again.
    assert "misconduct.bad_faith" not in rewrite and "Keep the emotional intensity" in rewrite
    offline = apply_condition(scenario("tenancy"), "cause:misconduct")
    assert [p.persona for p in out.parties] == [p.persona for p in offline.parties]


def test_two_step_takes_an_intensity_too_and_refuses_what_is_not_one(tmp_path: Path) -> None:
    with fake_openai(_two_step_replies) as server:
        _write(tmp_path, server.url, "cause:misconduct@1.5@two-step")
        assert "noticeably more heated" in _prompt(server.requests[1])
    for bad in ("cause:misconduct@two-step@two-step", "cause:misconduct@1@2", "cause:misconduct@3"):
        with pytest.raises(ConditionError, match=r"cause:misconduct@"):
            apply_condition(scenario("tenancy"), bad)


def test_one_call_stays_the_default(tmp_path: Path) -> None:
    reply = {"subcategory": "misconduct.bad_faith", "brief": BRIEF}
    with fake_openai(lambda body: Scripted(content=json.dumps(reply))) as server:
        _write(tmp_path, server.url, "cause:misconduct")
        assert len(server.requests) == 1
        assert server.requests[0]["response_format"]["json_schema"]["name"] == "cause"
