"""Value impact on rule agents, the candidate pool and its files, and the selection's
reproducibility. These check the machinery (common random numbers, the zero-shot
baseline, coverage of categories), never which method wins."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from disputelab.llm import embedding
from disputelab.llm.embedding import embedding_available
from disputelab.protocols.bilateral.agents.exemplars import (
    Exemplar,
    ExemplarFile,
    load_exemplars,
    save_exemplars,
)
from disputelab.protocols.bilateral.agents.library import builtin_pool_path, resolve
from disputelab.protocols.bilateral.agents.norms import CATEGORIES
from disputelab.protocols.bilateral.agents.remediators import nearest
from disputelab.protocols.bilateral.remediation.pool import generate_pool
from disputelab.protocols.bilateral.remediation.select import Budget, select_exemplars
from disputelab.protocols.bilateral.remediation.simulate import Cast, exactly, play_once
from disputelab.protocols.bilateral.remediation.value import ValueImpact, build_rollouts


@pytest.fixture(scope="module")
def rollouts() -> object:
    return asyncio.run(build_rollouts(10, 0, Cast()))


def _ex(i: str, category: str, style: str = "alternatives") -> Exemplar:
    return Exemplar(i, "s", category, (), "v", "r", style)


def test_rollouts_have_one_remediation_point_and_distinct_seeds(rollouts: object) -> None:
    assert len(rollouts.items) == 10  # type: ignore[attr-defined]
    seeds = [s for _, s in rollouts.items]  # type: ignore[attr-defined]
    assert len(set(seeds)) == len(seeds)


def test_the_empty_set_is_the_zero_shot_arm_so_its_value_impact_is_exactly_zero(
    rollouts: object,
) -> None:
    vi = ValueImpact([], rollouts, Cast())  # type: ignore[arg-type]
    assert asyncio.run(vi(())) == 0.0


def test_an_exemplar_of_a_category_that_never_occurs_changes_nothing() -> None:
    """The template remediator falls back to zero-shot off its exemplars' categories, and
    both arms share their dialogue up to the remediation point. Two dialogues with one
    violation each leave at least three categories unseen."""
    cast = Cast()
    two = asyncio.run(build_rollouts(2, 3, cast))
    occurring = set()
    for scenario, seed in two.items:
        ep = asyncio.run(play_once(scenario, seed, exactly(()), cast, {"single_violation": True}))
        occurring |= {
            x.split(":")[1] for t in ep.turns for x in t.stage.split() if "violation:" in x
        }
    absent = [c for c in CATEGORIES if c not in occurring]
    assert len(absent) >= 3
    vi = ValueImpact([_ex("z", absent[0])], two, cast)
    assert asyncio.run(vi(("z",))) == 0.0
    present = ValueImpact([_ex("p", sorted(occurring)[0])], two, cast)
    assert asyncio.run(present(("p",))) != 0.0


def test_covering_every_category_changes_the_reward_somewhere(rollouts: object) -> None:
    pool = [_ex(c, c) for c in CATEGORIES]
    vi = ValueImpact(pool, rollouts, Cast())  # type: ignore[arg-type]
    assert asyncio.run(vi(tuple(CATEGORIES))) != 0.0
    assert vi.episodes == 10


def test_the_shipped_pool_is_what_the_generator_makes_from_seed_zero() -> None:
    shipped = load_exemplars(builtin_pool_path())
    made = asyncio.run(generate_pool("builtin", len(shipped.exemplars), 0, Cast()))
    assert made.exemplars == shipped.exemplars
    assert {e.category for e in made.exemplars} == set(CATEGORIES)


def test_exemplar_files_round_trip_and_bad_ones_fail_in_one_line(tmp_path: Path) -> None:
    f = ExemplarFile("s", "set", (_ex("a", "insulting"),), {"seed": 1})
    path = save_exemplars(f, tmp_path / "exemplars" / "s.json")
    assert resolve("s", tmp_path) == f
    assert resolve(str(path)) == f
    (tmp_path / "bad.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="cannot read exemplars") as exc:
        resolve(str(tmp_path / "bad.json"))
    assert "\n" not in str(exc.value)
    with pytest.raises(ValueError, match="no exemplars named 'nope'"):
        resolve("nope", tmp_path)


def test_retrieval_returns_the_k_nearest_and_names_its_embedding() -> None:
    pool = load_exemplars(builtin_pool_path()).exemplars
    query = pool[0].query_text()
    found, kind = nearest(query, pool, 3, semantic=False)
    assert kind == "lexical" and found[0] == pool[0] and len(found) == 3


@pytest.mark.skipif(embedding_available() is not None, reason="needs the embed extra")
def test_retrieval_asked_for_embeddings_without_the_model_ranks_all_by_lexical_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The pool's vectors are remembered between calls: once by the sentence model, they
    # must not be paired with a lexical query when the model is gone.
    pool = load_exemplars(builtin_pool_path()).exemplars
    query = pool[0].query_text()
    assert nearest(query, pool, 3, semantic=True)[1] == "all-MiniLM-L6-v2"
    monkeypatch.setattr(embedding, "embedding_available", lambda: "the model is gone")
    found, kind = nearest(query, pool, 3, semantic=True)
    assert kind == "lexical" and found == nearest(query, pool, 3, semantic=False)[0]


def test_selection_is_reproducible_from_its_seed_and_records_its_cost() -> None:
    pool = load_exemplars(builtin_pool_path())
    budget = Budget(k=3, candidates=8, rollouts=4, patience=2, evaluations=10)
    a = asyncio.run(select_exemplars(pool, "a", 7, Cast(), budget))
    b = asyncio.run(select_exemplars(pool, "b", 7, Cast(), budget))
    assert a.exemplars == b.exemplars and len(a.exemplars) == 3
    assert a.meta["set_evaluations"] <= 10 and a.meta["episodes_played"] > 0
    assert a.meta["value_impact"] >= a.meta["initial_value_impact"]
    assert a.meta["model_calls"] == {}  # offline
