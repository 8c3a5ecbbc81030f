"""Outcome metrics of AgentMediation, SettleAgent and the remediator, on hand-worked cases."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from disputelab.evaluation.outcomes import (
    LIKERT,
    UnknownLabelError,
    accuracy_at,
    chinese_number,
    deal_rate,
    legal_basis_recall,
    likert_level,
    likert_score,
    normalize_legal_basis,
    paper_rouge_l,
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


def test_likert_is_pooled_over_every_response() -> None:
    # labels 4, 3, 2, 2 -> mean 2.75 -> 2.75 / 4 * 100 = 68.75
    r = likert_score(["Very High", "high", "Medium", "中等"])
    assert r.value == pytest.approx(68.75)
    assert r.detail == {"n": 4}
    assert math.isnan(likert_score([]).value)


# The paper's five levels in English (its tables) and in Chinese (its code's satisfaction,
# consensus and risk prompts), and the plain Chinese our own parties speak.
@pytest.mark.parametrize(
    ("labels", "level"),
    [
        (["Very Low", "很低", "非常低"], 0),
        (["Low", "较低", "低"], 1),
        (["Medium", "中等", "中"], 2),
        (["High", "较高", "高"], 3),
        (["Very High", "很高", "非常高"], 4),
    ],
)
def test_every_label_the_paper_uses_has_its_level(labels: list[str], level: int) -> None:
    assert [likert_level(x) for x in labels] == [level] * len(labels)
    assert likert_score(labels).value == pytest.approx(level * 25)


def test_agentmediations_own_labels_score_on_the_papers_scale() -> None:
    # 较高 3, 很高 4, 中等 2, 较低 1 -> mean 2.5 -> 62.5
    assert likert_score(["较高", "很高", "中等", "较低"]).value == pytest.approx(62.5)
    assert likert_level("  较高 ") == likert_level("HIGH") == 3


@pytest.mark.parametrize("label", ["maybe", "比较满意", "较好", "4", "high-ish"])
def test_an_unknown_label_is_an_error_that_names_it(label: str) -> None:
    with pytest.raises(UnknownLabelError, match=re.escape(repr(label))):
        likert_level(label)
    with pytest.raises(UnknownLabelError, match=re.escape(repr(label))):
        likert_score(["高", label, "低"])


@pytest.mark.parametrize("label", [None, "", "  "])
def test_a_missing_label_is_an_error_too(label: str | None) -> None:
    with pytest.raises(UnknownLabelError, match="missing"):
        likert_score(["高", label])


def test_an_unknown_label_is_a_value_error_so_the_cli_reports_it_in_one_line() -> None:
    assert issubclass(UnknownLabelError, ValueError)


@given(st.lists(st.sampled_from(list(LIKERT)), min_size=1))
def test_the_score_is_the_mean_level_as_a_percentage(labels: list[str]) -> None:
    levels = [LIKERT[x] for x in labels]
    assert likert_score(labels).value == pytest.approx(sum(levels) / len(levels) * 25)
    assert 0 <= likert_score(labels).value <= 100


def test_rouge_l_on_chinese_characters() -> None:
    # LCS of 争议房租问题 (ref, 6 chars) and 双方争议房租 (hyp, 6 chars) is 争议房租 (4):
    # P = R = 4/6, F1 = 0.667
    r = rouge_l_f1("双方争议房租", "争议房租问题")
    assert r.value == pytest.approx(4 / 6)
    assert "CJK characters" in r.explanation and r.detail["style"] == "char"
    assert rouge_l_f1("", "争议").value == 0.0
    assert math.isnan(rouge_l_f1("争议", " ").value)


def test_rouge_l_on_the_papers_jieba_words_scores_words_not_characters() -> None:
    # jieba: 物业费|纠纷 (ref) and 物业公司|纠纷 (hyp): LCS 纠纷, P = R = 1/2.
    # By characters the LCS is 物业纠纷: P = 4/6, R = 4/5, F1 = 8/11.
    words = rouge_l_f1("物业公司纠纷", "物业费纠纷", "jieba")
    chars = rouge_l_f1("物业公司纠纷", "物业费纠纷")
    assert words.value == pytest.approx(0.5) and chars.value == pytest.approx(8 / 11)
    assert "jieba words" in words.explanation and words.detail["style"] == "jieba"
    # as in the paper, punctuation is a word: 争议|，|房租 against 争议|房租 gives R = 2/3
    assert rouge_l_f1("争议房租", "争议，房租", "jieba").detail["recall"] == pytest.approx(2 / 3)
    assert rouge_l_f1("争议房租", "争议，房租").detail["recall"] == 1.0


def test_the_papers_scorer_counts_distinct_words_and_the_union_of_sentence_lcs() -> None:
    # Repeated words count once: the reference a a a b has 2 distinct words, both on the
    # LCS with a b, so P = R = 1; rouge-score counts 4 reference tokens, R = 2/4.
    assert rouge_l_f1("a b", "a a a b", "paper").value == 1.0
    assert rouge_l_f1("a b", "a a a b", "jieba").value == pytest.approx(2 / 3)
    # The package's own example: reference w1..w5, hypothesis sentences w1 w2 w6 w7 w8 and
    # w1 w3 w8 w9 w5. Union LCS {w1, w2, w3, w5}: R = 4/5, P = 4/8 distinct, F1 = 8/13.
    hyp, ref = "w1 w2 w6 w7 w8. w1 w3 w8 w9 w5", "w1 w2 w3 w4 w5"
    r = rouge_l_f1(hyp, ref, "paper")
    assert (r.detail["precision"], r.detail["recall"]) == (0.5, 0.8)
    assert r.value == pytest.approx(8 / 13)
    assert "paper's scorer" in r.explanation and r.detail["style"] == "paper"


def test_the_papers_scorer_traces_its_lcs_as_the_rouge_package_does() -> None:
    # a a b c against b c a a: both "a a" and "b c" are longest; the package traces "b c",
    # 2 distinct words of 3: P = R = F1 = 2/3 ("a a" would give 1/3).
    assert paper_rouge_l("b c a a", "a a b c") == pytest.approx((2 / 3, 2 / 3, 2 / 3))


@given(st.text(alphabet="争议房租物业费纠纷赔偿，。ab .", min_size=1, max_size=30))
def test_a_text_scored_against_itself_is_one_in_every_style(text: str) -> None:
    assume(any(c.strip(" .，。") for c in text))  # at least one word to score
    for style in ("char", "jieba", "paper"):
        assert rouge_l_f1(text, text, style).value == 1.0, style


def test_an_unknown_rouge_style_is_an_error_that_names_it() -> None:
    with pytest.raises(ValueError, match="'words'"):
        rouge_l_f1("争议", "争议", "words")  # type: ignore[arg-type]


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


def test_a_settled_case_whose_amount_cannot_be_read_is_a_miss_not_left_out() -> None:
    acc = accuracy_at([None, 100.0], [100.0, 100.0], [True, True], 0.1)
    assert acc.value == 50.0
    assert acc.detail["unreadable"] == 1 and "counted as misses" in acc.explanation
    assert accuracy_at([None], [100.0], [True], 0.1).value == 0.0


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
