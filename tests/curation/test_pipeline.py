"""The curation pipeline end to end, with a scripted recasting model over real HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from disputelab.curation import CurationConfig, CurationResult, Rejected, curate, impasse_filter
from disputelab.curation.pipeline import REJECTED_LOG
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import FakeOpenAI, Scripted, fake_openai
from disputelab.scenario.io import load_scenario
from tests.curation import drafts
from tests.helpers import scenario


def seed_file(tmp_path: Path, name: str, body: str) -> Path:
    p = tmp_path / "seeds" / name
    p.parent.mkdir(exist_ok=True)
    p.write_text(body, encoding="utf-8")
    return p


def by_seed(replies: dict[str, Callable[[int], str]]) -> Callable[[dict[str, Any]], Scripted]:
    """Answer each request by the seed its prompt carries; the int is that seed's call count."""
    counts: dict[str, int] = {}

    def respond(body: dict[str, Any]) -> Scripted:
        prompt = body["messages"][1]["content"]
        key = next(k for k in replies if k in prompt)
        counts[key] = counts.get(key, 0) + 1
        return Scripted(content=replies[key](counts[key]))

    return respond


def run(server: FakeOpenAI, sources: list[Any], out: Path, **config: Any) -> CurationResult:
    model = ModelHub(None).model(f"openai:curator-test@{server.url}", "curator")
    return asyncio.run(curate(sources, model, out, CurationConfig(**config)))


def logged(out: Path) -> list[dict[str, str]]:
    lines = (out / REJECTED_LOG).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def requests_for(server: FakeOpenAI, marker: str) -> list[dict[str, Any]]:
    return [r for r in server.requests if marker in r["messages"][1]["content"]]


def test_a_hard_draft_is_accepted_and_written_as_yaml_that_reloads(tmp_path: Path) -> None:
    seed = seed_file(tmp_path, "bakery.txt", "Bakery row\nA café stopped paying its baker.")
    with fake_openai(lambda body: Scripted(content=drafts.text(drafts.hard()))) as server:
        result = run(server, [seed], tmp_path / "out")
    assert result.rejected == [] and len(result.accepted) == 1
    kept = result.accepted[0]
    assert kept.seed_id == "bakery" and kept.path == tmp_path / "out" / "bakery.yaml"
    assert sum(o != "resolved" for o in kept.outcomes) >= 2 and len(kept.outcomes) == 3
    s = load_scenario(kept.path)
    assert s.id == "bakery" and s.domain == "business-to-business"
    assert [t.id for t in s.topics] == ["REFUND", "INVOICES", "PRICE", "REVIEW"]
    assert s.topic("REVIEW").option_ids() == ["A", "B", "C"]
    cafe, bakery = s.parties
    assert cafe.id == "odile-marsh" and bakery.persona.strategy == "competing"
    assert all(sum(p.weights.values()) == 100 for p in s.parties)
    assert 0 < cafe.fallback.utility < 1 and bakery.persona.reactivity == 0.5
    assert logged(tmp_path / "out") == []
    # One call, schema-constrained, with the seed text in the prompt.
    (request,) = server.requests
    assert request["response_format"]["json_schema"]["name"] == "scenario_draft"
    assert "stopped paying its baker" in request["messages"][1]["content"]


def test_an_invalid_draft_is_reasked_with_the_error_and_the_fix_is_accepted(
    tmp_path: Path,
) -> None:
    seed = seed_file(tmp_path, "bakery.md", "# Bakery row\nA café stopped paying its baker.")
    replies = [drafts.with_unknown_option(), drafts.hard()]
    with fake_openai(lambda body: Scripted(content=drafts.text(replies.pop(0)))) as server:
        result = run(server, [seed], tmp_path / "out")
    assert [a.seed_id for a in result.accepted] == ["bakery"]
    first, second = server.requests
    follow_up = second["messages"][-1]["content"]
    assert "names unknown option 'E'" in follow_up and "parties[1].preferences.PRICE" in follow_up
    # The model sees its own faulty draft before the list of problems.
    assert second["messages"][-2]["role"] == "assistant"
    assert '"E"' in second["messages"][-2]["content"]
    assert len(second["messages"]) == len(first["messages"]) + 2


def test_an_easy_draft_is_rejected_by_the_impasse_filter_and_logged(tmp_path: Path) -> None:
    seed = seed_file(tmp_path, "easy.txt", "Easy row\nEveryone already agrees.")
    with fake_openai(lambda body: Scripted(content=drafts.text(drafts.easy()))) as server:
        result = run(server, [seed], tmp_path / "out")
    assert result.accepted == [] and not (tmp_path / "out" / "easy.yaml").exists()
    (entry,) = logged(tmp_path / "out")
    assert entry["seed_id"] == "easy" and entry["stage"] == "filter"
    assert "resolved without a mediator in 3 of 3 replays" in entry["reason"]
    assert result.rejected[0].reason == entry["reason"]


def test_a_dispute_no_package_could_settle_is_rejected_as_unplayable(tmp_path: Path) -> None:
    seed = seed_file(tmp_path, "stuck.txt", "Stuck row\nNeither side can move.")
    with fake_openai(lambda body: Scripted(content=drafts.text(drafts.hopeless()))) as server:
        result = run(server, [seed], tmp_path / "out")
    (rejected,) = result.rejected
    assert rejected.stage == "filter" and "cannot play it" in rejected.reason
    assert "no package is acceptable to every party" in rejected.reason


def test_a_model_that_never_gives_a_valid_draft_costs_only_its_own_seed(tmp_path: Path) -> None:
    seeds = [
        seed_file(tmp_path, "garbled.txt", "Garbled row\nThe model cannot answer this one."),
        seed_file(tmp_path, "wrong.txt", "Wrong row\nThe model keeps naming option E."),
        seed_file(tmp_path, "good.txt", "Good row\nA café stopped paying its baker."),
    ]
    replies = {
        "Garbled row": lambda n: "I would rather tell you a story about bread.",
        "Wrong row": lambda n: drafts.text(drafts.with_unknown_option()),
        "Good row": lambda n: drafts.text(drafts.hard()),
    }
    with fake_openai(by_seed(replies)) as server:
        result = run(server, seeds, tmp_path / "out", concurrency=3)
    assert [a.seed_id for a in result.accepted] == ["good"]
    by_id = {r.seed_id: r for r in result.rejected}
    assert by_id["garbled"].stage == "recast" and "did not fit" in by_id["garbled"].reason
    assert by_id["wrong"].stage == "validate"
    assert "names unknown option 'E'" in by_id["wrong"].reason
    # Bounded: 1 + 2 re-asks on unparsable replies; 1 + 2 fresh drafts on invalid ones.
    assert len(requests_for(server, "Garbled row")) == 3
    assert len(requests_for(server, "Wrong row")) == 3
    assert {e["seed_id"]: e["stage"] for e in logged(tmp_path / "out")} == {
        "garbled": "recast",
        "wrong": "validate",
    }
    assert all("\n" not in r.reason for r in result.rejected)


def test_seeds_run_concurrently_up_to_the_bound(tmp_path: Path) -> None:
    seeds = [seed_file(tmp_path, f"s{i}.txt", f"Row {i}\nA café row.") for i in range(6)]

    def slow(body: dict[str, Any]) -> Scripted:
        return Scripted(content=drafts.text(drafts.hard()), delay_s=0.2)

    with fake_openai(slow) as server:
        result = run(server, seeds, tmp_path / "out", concurrency=2)
    assert len(result.accepted) == 6 and server.max_in_flight == 2


def test_bad_seed_files_are_rejected_in_one_line_and_the_rest_go_on(tmp_path: Path) -> None:
    bad_json = seed_file(tmp_path, "batch.jsonl", '{"id": "ok", "text": "fine"}\n{"id": oops}\n')
    no_text = seed_file(tmp_path, "blank.jsonl", '{"id": "x", "title": "no text"}\n')
    unknown = seed_file(tmp_path, "where.jsonl", '{"text": "a row", "domain": "space"}\n')
    wrong_kind = seed_file(tmp_path, "notes.pdf", "not a seed")
    good = seed_file(tmp_path, "good.txt", "Good row\nA café stopped paying its baker.")
    sources = [bad_json, no_text, unknown, wrong_kind, tmp_path / "missing.txt", good]
    with fake_openai(lambda body: Scripted(content=drafts.text(drafts.hard()))) as server:
        result = run(server, sources, tmp_path / "out")
    assert [a.seed_id for a in result.accepted] == ["good"]
    reasons = [r.reason for r in result.rejected]
    assert all(isinstance(r, Rejected) and r.stage == "read" for r in result.rejected)
    assert all("\n" not in r for r in reasons) and len(reasons) == 5
    assert f"{bad_json}:2: not valid JSON" in reasons[0]
    assert f"{no_text}:1: no seed text" in reasons[1]
    assert f"{unknown}:1: unknown domain 'space'" in reasons[2]
    assert f"{wrong_kind}: unsupported file type" in reasons[3]
    assert "missing.txt: no such file" in reasons[4]
    assert [e["stage"] for e in logged(tmp_path / "out")] == ["read"] * 5


def test_a_near_duplicate_seed_is_never_sent_to_the_model(tmp_path: Path) -> None:
    account = (
        "Bakery row\nA café stopped paying its bakery after three mouldy deliveries, and "
        "the baker says the bread left his ovens fresh every morning of the month."
    )
    first = seed_file(tmp_path, "bakery.txt", account)
    again = seed_file(tmp_path, "bakery-again.txt", account.replace("three", "four"))
    with fake_openai(lambda body: Scripted(content=drafts.text(drafts.hard()))) as server:
        result = run(server, [first, again], tmp_path / "out")
    assert [a.seed_id for a in result.accepted] == ["bakery"]
    (dup,) = result.rejected
    assert dup.seed_id == "bakery-again" and dup.stage == "duplicate"
    assert "near-duplicate of seed 'bakery'" in dup.reason
    assert len(server.requests) == 1  # the copy cost no call
    assert [e["stage"] for e in logged(tmp_path / "out")] == ["duplicate"]


def test_the_impasse_filter_replays_with_the_disclosure_it_is_given() -> None:
    """Tenancy with its first fallbacks: negotiating parties settle it alone, parties who
    state their whole acceptable sets do not; so the setting must reach the replays."""
    s = scenario("tenancy")
    for party in s.parties:
        party.fallback.utility = 0.45
    negotiators = asyncio.run(impasse_filter(s, CurationConfig()))
    stating_all = asyncio.run(impasse_filter(s, CurationConfig(disclosure="full")))
    assert negotiators.reason is not None and negotiators.reason.startswith("too easy")
    assert negotiators.outcomes == ("resolved",) * 3
    assert stating_all.reason is None and "resolved" not in stating_all.outcomes
