"""`disputelab.api.exemplars`: the bilateral remediator's pools and sets, offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from disputelab import api
from disputelab.api import exemplars


def test_the_builtin_pool_loads_and_is_a_pool() -> None:
    pool = exemplars.load_exemplars(exemplars.BUILTIN)
    assert pool.kind == "pool" and pool.exemplars


def test_a_name_must_be_a_plain_word_other_than_builtin(tmp_path: Path) -> None:
    assert exemplars.check_exemplar_name("mine.v2") == "mine.v2"
    for bad in ("builtin", "has space", "../up"):
        with pytest.raises(exemplars.ExemplarError):
            exemplars.check_exemplar_name(bad)


def test_a_generated_pool_is_saved_listed_and_loaded_by_name(tmp_path: Path) -> None:
    store = tmp_path / "runs"
    hub = api.open_models([], store=store)
    pool = api.run_loop(lambda: exemplars.generate_pool_async("p", 3, 0, hub=hub, max_rounds=6))
    assert pool.name == "p" and pool.kind == "pool" and len(pool.exemplars) <= 3
    target = exemplars.new_exemplar_file("p", store=store)
    assert target == exemplars.exemplar_folder(store) / "p.json"
    exemplars.save_exemplars(pool, target)
    (saved,) = exemplars.saved_exemplars(store)
    assert (saved.name, saved.kind, saved.size) == ("p", "pool", len(pool.exemplars))
    assert saved.method and saved.value_impact is None and not saved.problem
    assert exemplars.load_exemplars("p", store) == pool
    with pytest.raises(exemplars.ExemplarsExistError) as caught:
        exemplars.new_exemplar_file("p", store=store)
    assert caught.value.path == target
    assert exemplars.new_exemplar_file("p", overwrite=True, store=store) == target


def test_an_unreadable_saved_file_is_listed_with_why(tmp_path: Path) -> None:
    folder = exemplars.exemplar_folder(tmp_path)
    folder.mkdir(parents=True)
    (folder / "junk.json").write_text("{}", encoding="utf-8")
    (found,) = exemplars.saved_exemplars(tmp_path)
    assert (found.name, found.kind, found.size) == ("junk", "unreadable", 0) and found.problem


def test_an_unknown_reference_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(exemplars.ExemplarError, match="no exemplars named 'nope'"):
        exemplars.load_exemplars("nope", tmp_path)


def test_a_set_is_selected_by_value_impact_and_compared_with_the_other_methods(
    tmp_path: Path,
) -> None:
    hub = api.open_models([], store=tmp_path)
    pool = exemplars.load_exemplars(exemplars.BUILTIN)
    chosen = api.run_loop(
        lambda: exemplars.select_exemplars_async(
            pool, "vi", 0, hub=hub, k=2, candidates=4, rollouts=2, budget=4
        )
    )
    assert chosen.kind == "set" and len(chosen.exemplars) == 2
    assert chosen.meta["method"] == "value-impact"
    result = api.run_loop(
        lambda: exemplars.compare_async(chosen, pool, hub=hub, tasks=2, replicates=1, lexical=True)
    )
    table = exemplars.comparison_markdown(result)
    assert "| value impact |" in table and "| zero-shot |" in table
    assert exemplars.retrieval_vectors(lexical=True) == ("lexical", None)
