"""`disputelab.api.curation`: seeds recast into scenarios by a model (here a scripted
OpenAI-compatible server), the hard ones kept."""

from __future__ import annotations

import json
from pathlib import Path

from disputelab import api
from disputelab.api import curation
from disputelab.llm.testing import Scripted, fake_openai
from tests.curation import drafts


def test_curate_keeps_a_hard_recast_and_logs_an_easy_one(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "bakery.txt").write_text("A cafe stopped paying its bakery after mouldy bread.")
    (seeds / "mixup.txt").write_text("Two neighbours argue about a hedge, then agree at once.")

    def reply(body: dict[str, object]) -> Scripted:
        text = json.dumps(body["messages"], ensure_ascii=False)
        return Scripted(content=drafts.text(drafts.easy() if "hedge" in text else drafts.hard()))

    heard: list[curation.Verdict] = []
    with fake_openai(reply) as server:
        model = f"openai:m@{server.url}"
        hub = api.open_models([model], store=tmp_path / "runs")
        result = api.run_loop(
            lambda: curation.curate_async(
                [seeds], model=model, hub=hub, out=tmp_path / "out", on_verdict=heard.append
            ),
            hub,
        )
    assert [type(v) for v in heard].count(curation.Accepted) == len(result.accepted) == 1
    assert len(result.rejected) == 1 and isinstance(result.rejected[0], curation.Rejected)
    assert result.accepted[0].path.parent == tmp_path / "out"
    assert result.rejected_log == tmp_path / "out" / "rejected.jsonl"
