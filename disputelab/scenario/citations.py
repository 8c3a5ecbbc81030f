"""Chinese statute citations: article numbers and one canonical form to compare them by.

Legal bases are written many ways (《民法典》第五百八十四条, 《民法典》第584条第一款, ...);
the solution evaluator and the statute retriever both compare them in this form.
"""

from __future__ import annotations

import re

_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_ARTICLE = re.compile(r"(《.*?》)[^第《]*?第?([一二三四五六七八九十百千万零〇两\d]+)条")


def chinese_number(text: str) -> int:
    """Chinese numerals as used in article numbers (一百二十三 -> 123), or digits."""
    if text.isdigit():
        return int(text)
    total, section, digit = 0, 0, 0
    for ch in text:
        if ch in _DIGITS:
            digit = _DIGITS[ch]
        elif ch in _UNITS:
            unit = _UNITS[ch]
            if unit == 10000:
                total += (section + digit) * unit
                section = 0
            else:
                section += (digit or 1) * unit
            digit = 0
    return total + section + digit


def normalize_legal_basis(text: str) -> str:
    """《Law》 article N -> '《Law》第N条' (first article wins; paragraphs dropped)."""
    m = _ARTICLE.search(text)
    if m is None:
        return text.strip()
    return f"{m.group(1)}第{chinese_number(m.group(2))}条"
