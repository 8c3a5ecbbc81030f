"""`disputelab.api.curation`: seeds recast into scenarios by a model (here a scripted
OpenAI-compatible server) or offline by rules, the hard ones kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from disputelab import api
from disputelab.api import curation
from disputelab.errors import DisputelabError
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


# ---- offline: recast by rules -------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEEDS = EXAMPLES / "curation-seeds"
CHECKS = EXAMPLES / "curation-checks"


def curate_by_rules(
    tmp_path: Path, *paths: Path
) -> tuple[curation.CurationResult, list[curation.Verdict]]:
    heard: list[curation.Verdict] = []
    result = api.run_loop(
        lambda: curation.curate_async(
            list(paths), recast="rules", out=tmp_path / "out", on_verdict=heard.append
        )
    )
    return result, heard


def test_rules_recast_different_seeds_into_valid_scenarios_rule_agents_can_play(
    tmp_path: Path,
) -> None:
    result, heard = curate_by_rules(tmp_path, SEEDS)
    names = sorted(p.stem for p in SEEDS.glob("*.txt"))
    assert sorted(v.seed_id for v in heard) == names and len(names) >= 4
    # Every seed made a valid scenario: none was turned down before the impasse filter.
    assert {r.stage for r in result.rejected} <= {"filter"} and result.accepted
    shapes = set()
    for name in names:
        (s,) = curation.rule_scenarios(SEEDS / f"{name}.txt")
        assert len(s.topics) >= 2 and 2 <= len(s.parties) <= 4
        assert s.assumptions[0].startswith("recast by rules")
        assert all(line.startswith(("inferred: ", "assumed: ")) for line in s.assumptions[1:])
        shapes.add((s.domain, tuple(t.id for t in s.topics), len(s.parties)))
    assert len(shapes) == len(names)  # different disputes, different scenarios
    for kept in result.accepted:
        checked = api.validate_scenario_file(kept.path)
        assert checked.warnings == [] and checked.scenario.id == kept.seed_id
        ran = api.run(kept.path, store=tmp_path / "runs", mediator="rule", budget=30)
        assert ran.baseline is not None and ran.episode.scenario_id == kept.seed_id
        assert ran.episode.outcome is not None and len(ran.episode.turns) > 2


def test_a_near_duplicate_seed_is_set_aside_before_it_is_recast(tmp_path: Path) -> None:
    result, _ = curate_by_rules(tmp_path, SEEDS / "clinic-closure.txt", CHECKS)
    (duplicate,) = [r for r in result.rejected if r.stage == "duplicate"]
    assert duplicate.seed_id == "clinic-closure-again"
    assert "near-duplicate of seed 'clinic-closure'" in duplicate.reason
    assert not (tmp_path / "out" / "clinic-closure-again.yaml").exists()
    logged = [json.loads(line) for line in result.rejected_log.read_text().splitlines()]
    assert {"seed_id": "clinic-closure-again", "stage": "duplicate"}.items() <= logged[0].items()


def test_the_impasse_filter_drops_a_dispute_that_settles_alone_and_keeps_one_that_does_not(
    tmp_path: Path,
) -> None:
    result, _ = curate_by_rules(
        tmp_path, CHECKS / "shared-workshop.txt", SEEDS / "software-licence.txt"
    )
    (kept,) = result.accepted
    (easy,) = result.rejected
    assert kept.seed_id == "software-licence" and "resolved" not in kept.outcomes
    assert easy.seed_id == "shared-workshop" and easy.stage == "filter"
    assert easy.reason.startswith("too easy: resolved without a mediator in 3 of 3 replays")
    # The easy one is easy by a stated rule, and its provenance would have said so.
    assert "every party ranks the middle options first" in " ".join(
        curation.rule_scenarios(CHECKS / "shared-workshop.txt")[0].assumptions
    )


def test_recast_by_rules_takes_no_model_and_recast_by_model_needs_one(tmp_path: Path) -> None:
    with pytest.raises(DisputelabError, match="recast by rules takes no model"):
        api.run_loop(
            lambda: curation.curate_async([SEEDS], model="local", recast="rules", out=tmp_path)
        )
    with pytest.raises(DisputelabError, match="recast by model needs a model"):
        api.run_loop(lambda: curation.curate_async([SEEDS], out=tmp_path))
