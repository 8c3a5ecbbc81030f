"""Acceptance on the real data: a mediator whose proposals are the gold answer scores
exactly 1 on legal-basis recall and on points-of-contention ROUGE-L, in every case."""

from __future__ import annotations

import json
from typing import Any

import pytest

from disputelab.episode import Episode, Intervention, Turn
from disputelab.evaluation.outcomes import RougeStyle, legal_basis_recall, rouge_l_f1
from disputelab.protocols.staged.evaluation.agentmediation import score_staged
from disputelab.scenario.importers.agentmediation import import_agentmediation
from disputelab.scenario.schema import Scenario
from tests.helpers import AGENTMEDIATION_CASES

CASES = AGENTMEDIATION_CASES
pytestmark = pytest.mark.data("agentmediation")


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    lines = CASES.read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    result = import_agentmediation(CASES)
    assert result.problems == []
    return result.scenarios


def _gold_episode(s: Scenario) -> Episode:
    """A staged episode whose two scored proposals carry exactly the case's gold answer."""
    assert s.legal is not None
    gold = Intervention(
        utterance="",
        points="".join(s.legal.points_of_contention),
        bases=tuple(s.legal.legal_bases),
    )
    turns = [
        Turn(i, 0, "mediator", "mediator", "", intervention=gold, stage=stage)
        for i, stage in enumerate(("option", "closure"))
    ]
    return Episode(s.id, "staged", 0, {"mediator": "gold"}, turns=turns)


@pytest.mark.parametrize("style", ["char", "jieba", "paper"])
def test_the_gold_points_and_bases_score_one_against_themselves(
    records: list[dict[str, Any]], style: RougeStyle
) -> None:
    assert records, "the case file holds no case"
    recall = [legal_basis_recall(r["article"], r["article"]).value for r in records]
    rouge = [rouge_l_f1(r["point"], r["point"], style).value for r in records]
    assert sum(recall) / len(recall) == 1.0 and set(recall) == {1.0}
    assert sum(rouge) / len(rouge) == 1.0 and set(rouge) == {1.0}


def test_a_mediator_proposing_the_gold_answer_scores_one_in_every_imported_case(
    scenarios: list[Scenario], records: list[dict[str, Any]]
) -> None:
    assert len(scenarios) == len(records)
    for s in scenarios:
        scores = score_staged(_gold_episode(s), s)
        assert scores["legal_basis_recall"].value == 1.0, s.id
        assert scores["points_rouge_l"].value == 1.0, s.id
        assert scores["legal_basis_recall"].detail["per_proposal"] == [1.0, 1.0]


def test_a_proposal_citing_one_article_of_a_regulation_misses_its_other_article(
    scenarios: list[Scenario],
) -> None:
    # Case 48 cites articles 15 and 39 of 《工伤保险条例》, each after an order number with
    # a 第 in brackets: citing only article 15 covers one of those two bases, not both.
    s = next(
        s
        for s in scenarios
        if s.legal is not None and any("国务院令第586号）第39条" in b for b in s.legal.legal_bases)
    )
    assert s.legal is not None
    only_15 = [b for b in s.legal.legal_bases if "第39条" not in b]
    r = legal_basis_recall(s.legal.legal_bases, only_15)
    assert r.value == pytest.approx((len(s.legal.legal_bases) - 1) / len(s.legal.legal_bases))
    assert r.detail["missed"] == ["《工伤保险条例》第39条"]


def test_the_rouge_style_is_named_in_the_staged_scores_explanation(
    scenarios: list[Scenario],
) -> None:
    s = scenarios[0]
    assert "CJK characters" in score_staged(_gold_episode(s), s)["points_rouge_l"].explanation
    jieba = score_staged(_gold_episode(s), s, rouge="jieba")["points_rouge_l"]
    assert "jieba words" in jieba.explanation and jieba.value == 1.0
