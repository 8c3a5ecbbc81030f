"""Outcome metrics of AgentMediation, SettleAgent and the remediator, on hand-worked cases."""

from __future__ import annotations

import math

import pytest

from disputelab.evaluation.outcomes import (
    accuracy_at,
    chinese_number,
    deal_rate,
    legal_basis_recall,
    likert_score,
    normalize_legal_basis,
    remediation_reward,
    rouge_l_f1,
    settlement_rate,
    success_rate,
    unconditional_accuracy,
)


def test_a_case_succeeds_only_if_every_party_accepts() -> None:
    r = success_rate(
        [
            ["accept", "accept"],
            ["accept", "uncertain"],
            ["accept", "accept", "accept"],
            ["reject", "accept"],
        ]
    )
    assert r.value == 50.0 and r.detail == {"succeeded": 2, "cases": 4}
    assert math.isnan(success_rate([]).value)


def test_likert_is_pooled_and_unknown_labels_are_left_out_not_zeroed() -> None:
    # labels 4, 3, 2, 2 -> mean 2.75 -> 2.75 / 4 * 100 = 68.75
    r = likert_score(["Very High", "high", "Medium", "中等", "maybe", None])
    assert r.value == pytest.approx(68.75)
    assert r.detail == {"n": 4, "unknown": 2}
    assert math.isnan(likert_score(["??"]).value)


def test_rouge_l_on_chinese_characters() -> None:
    # LCS of 争议房租问题 (ref, 6 chars) and 双方争议房租 (hyp, 6 chars) is 争议房租 (4):
    # P = R = 4/6, F1 = 0.667
    assert rouge_l_f1("双方争议房租", "争议房租问题").value == pytest.approx(4 / 6)
    assert rouge_l_f1("", "争议").value == 0.0
    assert math.isnan(rouge_l_f1("争议", " ").value)


def test_article_numbers_are_normalised_from_chinese_numerals() -> None:
    assert chinese_number("一百二十三") == 123
    assert chinese_number("十") == 10 and chinese_number("二十") == 20
    assert chinese_number("一千零八十") == 1080 and chinese_number("577") == 577
    assert normalize_legal_basis("《中华人民共和国民法典》第五百七十七条第一款") == (
        "《民法典》第577条"
    )
    assert normalize_legal_basis("《民法典》577条") == "《民法典》第577条"
    # the short and the full name of a law are one law
    assert normalize_legal_basis("《中华人民共和国证券法》（2019年修正）第85条") == (
        normalize_legal_basis("《证券法》第八十五条")
    )
    # a document cited without an article: its title, without the issuing number
    assert (
        normalize_legal_basis(
            "《最高人民法院关于审理证券市场虚假陈述侵权民事赔偿案件的若干规定》（法释〔2022〕2号）"
        )
        == "《最高人民法院关于审理证券市场虚假陈述侵权民事赔偿案件的若干规定》"
    )


def test_legal_basis_recall_matches_after_normalisation() -> None:
    gold = ["《民法典》第五百七十七条", "《民法典》第五百八十四条", "《劳动法》第五十条"]
    cited = ["《民法典》第577条第二款", "《劳动法》第50条", "《公司法》第3条"]
    r = legal_basis_recall(gold, cited)
    assert r.value == pytest.approx(2 / 3)
    assert r.detail["missed"] == ["《民法典》第584条"]
    assert legal_basis_recall(gold, []).value == 0.0
    assert math.isnan(legal_basis_recall([], cited).value)  # the code crashed here


def test_acc_at_tau_counts_settled_cases_only_and_inclusively() -> None:
    amounts = [100.0, 125.0, 90.0, None, 50.0]
    refs = [100.0, 100.0, 100.0, 100.0, 0.0]
    settled = [True, True, True, False, True]
    # settled and scorable: 100 (0%), 125 (25%), 90 (10%); the zero reference is left out
    assert accuracy_at(amounts, refs, settled, 0.10).value == pytest.approx(200 / 3)
    assert accuracy_at(amounts, refs, settled, 0.30).value == pytest.approx(100.0)
    assert accuracy_at(amounts, refs, settled, 0.10).detail["zero_reference"] == 1
    sr = settlement_rate(settled)
    assert sr.value == 0.8
    assert unconditional_accuracy(sr, accuracy_at(amounts, refs, settled, 0.3)).value == 80.0
    assert math.isnan(accuracy_at([None], [10.0], [False], 0.1).value)


def test_remediation_reward_equation_two() -> None:
    # price 850 between buyer 800 and seller 1000: v = 0.25; deal +1; trust +1; relation 0
    r = remediation_reward(850, 800, 1000, True, "Deepening", "No change")
    assert r.value == pytest.approx(0.7 * 0.25 + 0.1 + 0.1 + 0.0)
    # no deal: v = 0, b_deal = -1 -> the floor of -0.3 with everything weakening
    assert remediation_reward(None, 800, 1000, False, "weakening", "weakening").value == (
        pytest.approx(-0.3)
    )
    assert (
        remediation_reward(2000, 800, 1000, True, "no change", "no change").detail["v_price"] == 1.0
    )
    assert math.isnan(remediation_reward(900, 800, 800, True, "no change", "no change").value)
    assert math.isnan(remediation_reward(None, 800, 1000, True, "no change", "no change").value)


def test_deal_rate() -> None:
    assert deal_rate([True, False, True, True]).value == 75.0
    assert math.isnan(deal_rate([]).value)
