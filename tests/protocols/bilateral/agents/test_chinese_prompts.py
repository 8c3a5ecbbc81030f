"""A negotiation held in Chinese (an imported SADAS scenario): model parties and the
model remediator are told so; English scenarios send what they always did."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.protocols.bilateral.agents.llm import LLMBargainer
from disputelab.protocols.bilateral.agents.remediators import LLMRemediator
from disputelab.scenario.importers import read_cases
from tests.helpers import scenario
from tests.sadas_files import exemplar_file


def test_model_parties_and_remediator_are_told_the_negotiation_is_in_chinese(
    tmp_path: Path,
) -> None:
    (product,) = read_cases("sadas", exemplar_file(tmp_path)).scenarios
    assert "Simplified Chinese" in LLMBargainer(product, "seller", None, 0).system  # type: ignore[arg-type]
    english = LLMBargainer(scenario("product-sale"), "seller", None, 0)  # type: ignore[arg-type]
    assert "Chinese" not in english.system

    async def rewrite() -> list[dict[str, object]]:
        hub = ModelHub(tmp_path / "cache.sqlite")
        reply = Scripted(content=json.dumps({"rewrite": "抱歉，我们的报价是$75。"}))
        with fake_openai(lambda body: reply) as server:
            rem = LLMRemediator(product, 0, "zero-shot", hub.model(f"openai:r@{server.url}", "x"))
            turn = PublicTurn(0, 1, "seller", "party", "你太外行了，$75。")
            try:
                await rem.remediate([turn], turn.text, "insulting", TurnContext(1, 20, 1))
            finally:
                await hub.aclose()
            return list(server.requests)

    (request,) = asyncio.run(rewrite())
    assert "Simplified Chinese" in json.dumps(request["messages"], ensure_ascii=False)
