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
