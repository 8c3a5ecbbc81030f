"""`party_reflection` (AgentMediation's party): after each statement and bargaining turn
an LLM party checks its line, revising the words on a serious fault, and notes the terms
it now stands on; the note is in its next prompt. Off, none of these calls is made."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_name, requested_schema
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.base import get_protocol
from disputelab.store.sqlite import Store

FIRST = "We will pay 5000 and not a penny more."
REVISED = "We can pay 6000 for the repairs."
TERMS = "We bear half the repair cost, 6000 at most."


def _answer(body: dict[str, Any], first: str = FIRST) -> Scripted:
    schema = requested_schema(body)
    reply = fill(schema, text="Let us look at the repairs.")
    name = requested_name(body)
    prompt = body["messages"][-1]["content"]
    if name == "party_action":
        reply["utterance"] = first
    elif name == "self_check":
        # The first line has a fault (its demand went the wrong way); the revision has none.
        wrong = f"Your line:\n{FIRST}" in prompt
        reply.update(serious_problem=wrong, revised=REVISED if wrong else "")
    elif name == "terms_note":  # says which line it was asked about
        reply["terms"] = f"{TERMS} [{'revised' if REVISED in prompt else 'first'}]"
    return Scripted(content=json.dumps(reply))


def _run(
    tmp_path: Path, reflect: bool, first: str = FIRST
) -> tuple[Store, str, list[dict[str, Any]]]:
    store = Store(tmp_path / "runs")
    with fake_openai(lambda body: _answer(body, first)) as server:
        model = f"openai:m@{server.url}"
        spec = ExperimentSpec(
            name="reflect",
            protocol="staged",
            scenarios=["tenancy"],
            mediators=["llm"],
            parties="llm",
            models={"parties": model, "mediator": model},
            replicates=1,
            rounds=1,
            params={"party_reflection": True} if reflect else {},
        )
        summary = asyncio.run(
            run_experiment(
                store, plan_experiment(spec, base=tmp_path), ModelHub(store.root / "cache.sqlite")
            )
        )
    assert summary.failed == 0, summary.errors
    return store, summary.run_id, server.requests


def test_a_faulty_line_is_revised_and_the_terms_note_reaches_the_next_prompt(
    tmp_path: Path,
) -> None:
    store, run_id, requests = _run(tmp_path, reflect=True)
    (eid,) = store.complete_episode_ids(run_id)
    turns = [
        t
        for t in store.load_episode(eid).episode.turns
        if t.role == "party" and t.stage in ("statement", "bargaining")
    ]
    assert turns and all(t.text == REVISED for t in turns)
    assert all("revised by self-check, 1x" in (t.action.thought if t.action else "") for t in turns)
    names = [requested_name(r) for r in requests]
    acts = names.count("party_action")
    # Per turn: a check that finds the fault, one that passes the revision, and a note
    # asked beside the first check about the first line, then again about the revision.
    assert names.count("self_check") == 2 * acts and names.count("terms_note") == 2 * acts
    prompts = [
        r["messages"][-1]["content"] for r in requests if requested_name(r) == "party_action"
    ]
    # Two parties: each one's first turn has no note yet, its second shows it; the note
    # kept is always the one about the revised line.
    assert sum(f"{TERMS} [revised]" in p for p in prompts) == acts - 2
    assert TERMS not in prompts[0] and TERMS in prompts[-1]
    assert not any("[first]" in p for p in prompts)


def test_a_line_that_passes_its_check_has_one_note_asked_beside_the_check(
    tmp_path: Path,
) -> None:
    _, _, requests = _run(tmp_path, reflect=True, first=REVISED)  # every line passes
    names = [requested_name(r) for r in requests]
    acts = names.count("party_action")
    assert names.count("self_check") == acts and names.count("terms_note") == acts


def test_off_by_default_no_check_or_note_is_asked(tmp_path: Path) -> None:
    _, _, requests = _run(tmp_path, reflect=False)
    names = {requested_name(r) for r in requests}
    assert "party_action" in names and not names & {"self_check", "terms_note"}


def test_the_dry_run_bound_counts_the_extra_calls() -> None:
    proto = get_protocol("staged")
    plain = proto.max_calls(proto.Params(rounds=2), 2)["parties"]
    reflecting = proto.max_calls(proto.Params(rounds=2, party_reflection=True), 2)["parties"]
    # 2 parties x 3 turns x (3 checks + a note, asked again after a revision)
    assert reflecting - plain == 2 * 3 * 5
