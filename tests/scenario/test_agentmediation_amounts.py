"""Settled amounts read from AgentMediation's recorded results: a plain amount, a stated
total, instalments summed; ranges, periodic payments and unexplained lists are reported as
unreadable, never guessed. On the real dataset (skipped when absent), every readable case
gets an amount term whose reference is that amount, and the rest are named in warnings."""

from __future__ import annotations

import pytest

from disputelab.scenario.importers.agentmediation import import_agentmediation
from disputelab.scenario.importers.amounts import chinese_number, recorded_amount
from tests.helpers import AGENTMEDIATION_CASES

DATASET = AGENTMEDIATION_CASES


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("王某同意赔偿陈某各项损失4.2万元，纠纷了结。", 42_000),
        ("由卫生院一次性赔偿卓某各项损失共计26200元。", 26_200),
        ("约定物业公司一次性付清劳务费共计54,595元。", 54_595),
        ("被告支付五万元，原告撤诉。", 50_000),
        ("甲支付5139元医疗费和6500元误工费，合计11639元。", 11_639),
        ("于9月之前支付20000元，于10月之前支付20000元，于11月之前支付18280元。", 58_280),
    ],
)
def test_a_plain_amount_a_total_or_instalments_are_read(text: str, amount: float) -> None:
    assert recorded_amount(text).amount == pytest.approx(amount)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("双方握手言和，签订调解协议。", "no amount"),
        ("支付每户业主3500元或4000元不等的违约金。", "range"),
        ("黄某承担医疗费用5000元，并每月支付1500元赡养费。", "periodic"),
        ("拍卖总价由900万元变更为800万元，另付50万元利息补偿。", "several amounts"),
    ],
)
def test_anything_less_plain_is_unreadable_with_a_reason(text: str, why: str) -> None:
    reading = recorded_amount(text)
    assert reading.amount is None and why in reading.reason


def test_chinese_numerals() -> None:
    assert chinese_number("一万二千") == 12_000
    assert chinese_number("三十五") == 35
    assert chinese_number("两百") == 200


@pytest.mark.data("agentmediation")
def test_the_dataset_cases_with_a_readable_amount_get_an_amount_term() -> None:
    result = import_agentmediation(DATASET)
    with_amount = [s for s in result.scenarios if s.terms]
    summary = next(w for w in result.warnings if "state a settled amount" in w)
    assert summary.startswith(f"{len(with_amount)} of {len(result.scenarios)} case(s)")
    assert 0 < len(with_amount) < len(result.scenarios)
    assert all(s.terms[0].reference and s.terms[0].reference > 0 for s in with_amount)
    assert any(w.startswith("no amount for") for w in result.warnings)
