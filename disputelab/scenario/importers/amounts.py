"""Reading the settled amount from a recorded mediation result (AgentMediation's 处理结果).

The rule is strict on purpose: an amount is read only when the record says plainly what
was paid, and anything else is reported as unreadable, with the reason, never guessed.

- Money is an Arabic number (with thousands separators, decimals, 万 or 亿) or a Chinese
  numeral (五万, 一万二千) followed by 元; "约" or "余" before 元 make it approximate,
  which is still read.
- A range ("600元至70000元", "3500元或4000元不等", "区间") is not one amount: unreadable.
- A periodic payment (每月, 每年, 按月) has no total: unreadable.
- One distinct amount: that amount.
- Several: a stated total (共计, 合计, 总计, 总额, 总标的额) wins; then the largest when it
  is the sum of the others (a total given beside its parts); otherwise, when the amounts
  are paid in instalments or batches (分期, 分批, 第一批/期, 之前支付), their sum (the
  spec's total payable); otherwise unreadable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}
_UNITS = {"十": 10, "百": 100, "千": 1000}
_BIG = {"万": 10_000, "亿": 100_000_000}
_ARABIC = r"\d+(?:[,，]\d{3})*(?:\.\d+)?"
_CHINESE = r"[零一二两三四五六七八九十百千]+"
MONEY = re.compile(
    rf"(?P<pre>共计|合计|总计|总额|总标的额|总金额)?[^，。；,;\d零一二两三四五六七八九十百千]{{0,6}}?"
    rf"(?P<num>{_ARABIC}|{_CHINESE})\s*(?P<big>万|亿)?\s*(?:余|多)?\s*元"
)
RANGE = re.compile(r"元\s*(?:至|到|或|-|—|~)\s*[\d零一二两三四五六七八九十百千]|不等|区间")
PERIODIC = re.compile(r"每月|每年|按月|每季度|每周")
INSTALMENTS = re.compile(r"分期|分批|第[一二三四五六七八九十\d]+[批期]|之前支付|前支付")


@dataclass(frozen=True)
class AmountReading:
    amount: float | None
    reason: str  # how it was read, or why it could not be


def chinese_number(text: str) -> float:
    """一万二千 -> 12000, 三十五 -> 35, 两百 -> 200 (below 万 per section)."""
    total, section, digit = 0, 0, 0
    for ch in text:
        if ch in _DIGITS:
            digit = _DIGITS[ch]
        elif ch in _UNITS:
            section += (digit or 1) * _UNITS[ch]
            digit = 0
        elif ch in _BIG:
            total += (section + digit) * _BIG[ch]
            section, digit = 0, 0
    return float(total + section + digit)


def _value(num: str, big: str | None) -> float:
    if re.fullmatch(_ARABIC, num):
        base = float(num.replace(",", "").replace("，", ""))
    else:
        base = chinese_number(num)
    return round(base * (_BIG[big] if big else 1), 2)


def money(text: str) -> list[tuple[float, bool]]:
    """Every amount of money in `text`, with whether a total marker stands before it."""
    return [(_value(m["num"], m["big"]), bool(m["pre"])) for m in MONEY.finditer(text)]


def recorded_amount(result: str) -> AmountReading:
    """The settled amount a recorded result states, or why it cannot be read."""
    found = money(result)
    if not found:
        return AmountReading(None, "the recorded result names no amount of money")
    if RANGE.search(result):
        return AmountReading(None, "the recorded result gives a range, not one amount")
    if PERIODIC.search(result):
        return AmountReading(None, "the recorded result sets a periodic payment with no total")
    distinct = sorted({a for a, _ in found})
    if len(distinct) == 1:
        return AmountReading(distinct[0], "the one amount the recorded result names")
    totals = sorted({a for a, total in found if total})
    if len(totals) == 1:
        return AmountReading(totals[0], "the total the recorded result states")
    if abs(distinct[-1] - sum(distinct[:-1])) <= 1:
        return AmountReading(distinct[-1], "the total the recorded result states beside its parts")
    if INSTALMENTS.search(result):
        return AmountReading(
            round(sum(a for a, _ in found), 2),
            "the sum of the instalments the recorded result lists",
        )
    shown = ", ".join(f"{a:,.0f}" for a in distinct[:4])
    return AmountReading(None, f"the recorded result names several amounts ({shown}) and no total")
