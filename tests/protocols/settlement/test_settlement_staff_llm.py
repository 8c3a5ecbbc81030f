"""The model-backed staff of a settlement, over real HTTP to the scripted server: the
outcome analyst's BATNA, the mediator's proposal on a stall, the auditor's verdict per
clause and the memory's guidance, each charged to its own role, each failing the episode
with its role named when its replies stay invalid, never replaced by a default."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from disputelab.experiments.episodes import run_single
from disputelab.llm.base import ModelReplyError
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import FakeOpenAI, Scripted, fake_openai, fill, requested_name
from disputelab.plan.cast import Cast
from disputelab.protocols.base import get_protocol
from disputelab.protocols.settlement.agents.memory import MemoryFile
from disputelab.scenario.library import builtin_scenarios
from disputelab.store.sqlite import Store

CASE = "settle-unpaid-overtime"  # claim 41,000 GBP, admitted 18,000, judgment 31,000
BATNA = {
    "expected_award": 30_000.0,
    "p_win": 0.75,
    "cost_plaintiff": 2_500.0,
    "cost_defendant": 3_500.0,
    "reasoning": "The records support most of the overtime claimed.",
}
REVISED_DEADLINE = "deadline: the full amount is paid within 14 days of signing"


def verdicts(body: dict[str, Any]) -> dict[str, Any]:
    """Revise every deadline clause, strike a clause naming a third party, pass the rest."""
    draft = body["messages"][1]["content"]  # the draft (a re-ask comes after it)
    listed = [line for line in draft.splitlines() if line[:1].isdigit() and ". " in line]
    out = []
    for line in listed:
        number, clause = line.split(". ", 1)
        if clause.startswith("deadline:") and clause != REVISED_DEADLINE:
            out.append({"clause": int(number), "verdict": "revise", "revised": REVISED_DEADLINE,
                        "reason": "a fixed date"})  # fmt: skip
        elif "third party" in clause:
            out.append({"clause": int(number), "verdict": "unverifiable", "revised": "",
                        "reason": "binds a non-party"})  # fmt: skip
        else:
            out.append({"clause": int(number), "verdict": "ok", "revised": "", "reason": ""})
    return {"verdicts": out}


def staff(body: dict[str, Any], batna: dict[str, Any] | None = None) -> Scripted:
    """A valid reply for every staff role (and anything else the schema asks for)."""
    name = requested_name(body)
    reply: Any
    if name == "settlement_batna":
        reply = batna or BATNA
    elif name == "settlement_audit":
        reply = verdicts(body)
    elif name == "settlement_mediation":
        low, high = _stalled_at(body)
        reply = {"amount": (low + high) / 2 + 100, "utterance": "Meet a little above halfway."}
    elif name == "settlement_guidance":
        n = body["response_format"]["json_schema"]["schema"]["properties"]["guidance"]["minItems"]
        reply = {"guidance": [{"finding": i, "text": f"Lesson {i} in our words."}
                              for i in range(1, n + 1)]}  # fmt: skip
    else:
        reply = fill(body["response_format"]["json_schema"]["schema"])
    return Scripted(content=json.dumps(reply))


def _stalled_at(body: dict[str, Any]) -> tuple[float, float]:
    ask = body["messages"][1]["content"]
    amounts = [float(w.replace(",", "")) for w in ask.split() if w.replace(",", "").isdigit()]
    return min(amounts[-2:]), max(amounts[-2:])


def _play(
    tmp_path: Path,
    server: FakeOpenAI,
    roles: tuple[str, ...],
    counsel: str = "mcts",
    **params: Any,
) -> Any:
    model = f"openai:m@{server.url}"
    kinds = {"parties": "rule", "counsel": counsel, "mediator": "rule"}
    kinds |= {r: "llm" for r in roles}
    store = Store(tmp_path)
    hub = ModelHub(store.root / "cache.sqlite")
    sc = builtin_scenarios()[CASE]
    cast = Cast(kinds, dict.fromkeys(roles, model))
    return asyncio.run(
        run_single(store, sc, cast, 0, "settlement", {"round_limit": 8, **params}, hub=hub)
    )


def test_the_model_analysts_batna_is_the_one_every_seat_and_metric_uses(tmp_path: Path) -> None:
    with fake_openai(staff) as server:
        result = _play(tmp_path, server, ("outcome",))
        asked = [requested_name(b) for b in server.requests]
    ep = result.episode
    assert asked == ["settlement_batna"]  # one call, at PREP
    (outcome,) = [t for t in ep.turns if t.speaker == "outcome"]
    fields = outcome.intervention.proposal  # type: ignore[union-attr]
    assert fields["source"] == "model" and float(fields["expected_award"]) == 30_000.0
    # r_p = 0.75 x 30,000 - 2,500 and r_d = 0.75 x 30,000 + 3,500, by the one BATNA model
    assert float(fields["reservation_plaintiff"]) == 20_000.0
    assert float(fields["reservation_defendant"]) == 26_000.0
    assert "records support" in outcome.intervention.thought  # type: ignore[union-attr]
    assert ep.usage["outcome"].calls == 1 and "counsel" not in ep.usage
    assert ep.agents["outcome"] == "llm" and ep.agents["outcome_model"].startswith("openai:m")
    settled = ep.outcome.amounts["amount"]  # type: ignore[union-attr]
    assert 20_000.0 <= settled <= 26_000.0  # inside the zone the model's BATNA opened
    assert 0.0 <= result.scores["surplus"].value <= 1.0
    assert any(k == "BATNA" and "(model)" in v for k, v in get_protocol("settlement").details(ep))


def test_the_analyst_sees_the_public_case_but_no_walk_away_nor_judgment(tmp_path: Path) -> None:
    with fake_openai(staff) as server:
        _play(tmp_path, server, ("outcome",))
        prompt = json.dumps(server.requests[0]["messages"], ensure_ascii=False)
    assert "41,000" in prompt and "18,000" in prompt  # the claim and the admitted amount
    for hidden in ("31,000", "24,000", "34,000"):  # the judgment and both walk-aways
        assert hidden not in prompt


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ({**BATNA, "expected_award": 50_000.0}, "must lie between the admitted amount"),
        ({**BATNA, "p_win": 0.0}, "p_win"),
        ({**BATNA, "cost_plaintiff": 40_000.0}, "cost_plaintiff"),
    ],
)
def test_an_analyst_reply_out_of_range_is_asked_again_then_fails_the_episode(
    tmp_path: Path, bad: dict[str, Any], why: str
) -> None:
    with fake_openai(lambda body: staff(body, bad)) as server:
        with pytest.raises(ModelReplyError, match=rf"outcome analyst: .*{why}"):
            _play(tmp_path, server, ("outcome",))
        assert server.calls == 3  # the first ask and two re-asks, as for model counsel


def test_a_reply_fixed_on_the_re_ask_is_used(tmp_path: Path) -> None:
    with fake_openai(staff) as server:
        server.script(Scripted(content=json.dumps({**BATNA, "expected_award": -5.0})))
        result = _play(tmp_path, server, ("outcome",))
        assert server.calls == 2
    assert result.episode.usage["outcome"].calls == 2  # the refused reply was a call too


def test_the_analyst_refuses_the_known_judgment_in_one_line(tmp_path: Path) -> None:
    with fake_openai(staff) as server:
        with pytest.raises(ValueError, match="batna_source: judgment"):
            _play(tmp_path, server, ("outcome",), batna_source="judgment")
        assert server.calls == 0


def test_the_model_auditor_gives_a_verdict_per_clause_and_its_revision_is_signed(
    tmp_path: Path,
) -> None:
    with fake_openai(staff) as server:
        result = _play(tmp_path, server, ("auditor",))
        audits = sum(requested_name(b) == "settlement_audit" for b in server.requests)
    ep = result.episode
    reviews = [t for t in ep.turns if t.speaker == "auditor"]
    assert reviews and audits == len(reviews) == ep.usage["auditor"].calls
    first = reviews[0].intervention.proposal  # type: ignore[union-attr]
    assert first["flag"] == "warn" and "revise -> " + REVISED_DEADLINE in first["verdicts"]
    signed = [t.text for t in ep.turns if t.text.startswith("Agreement signed")]
    assert signed and REVISED_DEADLINE in signed[0]  # the revision was applied, then signed
    lines = dict(get_protocol("settlement").details(ep))
    assert "clause 1 " in lines["audit verdicts"]


def test_an_auditor_reply_that_skips_a_clause_fails_the_episode(tmp_path: Path) -> None:
    def skip_one(body: dict[str, Any]) -> Scripted:
        if requested_name(body) != "settlement_audit":
            return staff(body)
        return Scripted(content=json.dumps({"verdicts": verdicts(body)["verdicts"][1:]}))

    with (
        fake_openai(skip_one) as server,
        pytest.raises(ModelReplyError, match=r"compliance auditor: .*no verdict for clause 1"),
    ):
        _play(tmp_path, server, ("auditor",))


def test_the_model_mediator_proposes_between_the_standing_offers(tmp_path: Path) -> None:
    with fake_openai(staff) as server:
        # Boulware against Boulware stalls; the mediator steps in after 2 flat turns.
        result = _play(tmp_path, server, ("mediator",), stall_turns=2, round_limit=12)
    ep = result.episode
    proposals = [t for t in ep.turns if t.speaker == "mediator" and t.stage == "barg"]
    assert proposals and ep.usage["mediator"].calls == len(proposals)
    for t in proposals:
        assert t.text == "Meet a little above halfway."
        assert t.intervention is not None and t.intervention.offer["amount"] > 0


def test_a_mediator_figure_outside_the_offers_fails_the_episode(tmp_path: Path) -> None:
    def outside(body: dict[str, Any]) -> Scripted:
        if requested_name(body) != "settlement_mediation":
            return staff(body)
        return Scripted(content=json.dumps({"amount": 1e9, "utterance": "Pay it all."}))

    with (
        fake_openai(outside) as server,
        pytest.raises(ModelReplyError, match=r"mediator: .*between the standing offers"),
    ):
        _play(tmp_path, server, ("mediator",), stall_turns=2, round_limit=12)


def test_the_model_memory_words_the_guidance_and_keeps_the_search_facts(tmp_path: Path) -> None:
    with fake_openai(staff) as server:
        result = _play(tmp_path, server, ("memory",), memory="store", simulations=16)
        asked = sum(requested_name(b) == "settlement_guidance" for b in server.requests)
    entries = MemoryFile(tmp_path).load()
    assert entries and asked == result.episode.usage["memory"].calls > 0
    for e in entries:
        assert e.text.startswith("Lesson ") and e.payload["written_by"] == "model"
        assert e.payload["facts"]  # the template's sentence, from the search, kept


def test_the_memory_seat_calls_nothing_for_a_counsel_without_memory(tmp_path: Path) -> None:
    with fake_openai(staff) as server:
        result = _play(tmp_path, server, ("memory",), counsel="mcts-no-memory")
        assert server.calls == 0
    assert "memory" not in result.episode.usage


def test_a_guidance_reply_short_of_a_finding_fails_the_episode(tmp_path: Path) -> None:
    def short(body: dict[str, Any]) -> Scripted:
        if requested_name(body) != "settlement_guidance":
            return staff(body)
        return Scripted(content=json.dumps({"guidance": [{"finding": 1, "text": "One lesson."}]}))

    with (
        fake_openai(short) as server,
        pytest.raises(ModelReplyError, match=r"memory distiller: .*no guidance for finding"),
    ):
        _play(tmp_path, server, ("memory",), simulations=16)
