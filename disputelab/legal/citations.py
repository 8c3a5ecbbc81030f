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


_TITLE = re.compile(r"《[^《》]+》")
_STATE = "中华人民共和国"


def _title(title: str) -> str:
    """《中华人民共和国民法典》 and 《民法典》 name one law: keep the short form."""
    inner = title[1:-1]
    if inner.startswith(_STATE) and len(inner) > len(_STATE):
        inner = inner[len(_STATE) :]
    return f"《{inner}》"


def normalize_legal_basis(text: str) -> str:
    """One canonical form per provision: '《Law》第N条', the law by its short name (no
    leading 中华人民共和国), the first article only, paragraphs dropped. A document cited
    without an article keeps only its title, without the issuing number after it."""
    m = _ARTICLE.search(text)
    if m is not None:
        return f"{_title(m.group(1))}第{chinese_number(m.group(2))}条"
    t = _TITLE.search(text)
    return _title(t.group(0)) if t is not None else text.strip()
