"""Chinese statute citations: article numbers and one canonical form to compare them by.

Legal bases are written many ways (《民法典》第五百八十四条, 《民法典》第584条第一款,
《工伤保险条例》（2010年修订）（中华人民共和国国务院令第586号）第15条, ...); the solution
evaluator and the statute retriever both compare them in this form.
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
_NUMERAL = "[一二三四五六七八九十百千万零〇两\\d]+"


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
# Bracketed notes after a title: the version (（2020年第二次修正）), the issuing order
# (（国务院令第586号）), a document number (〔2022〕). They are not part of the article
# reference, and the 第 inside them must not be read as the article's 第.
_NOTE = re.compile(r"（[^（）]*）|\([^()]*\)|〔[^〔〕]*〕|\[[^\[\]]*\]|【[^【】]*】")
# A version note written inside the title, 《…解释（2020年修正）》: the same law as without it,
# just as a version note after the title is dropped.
_VERSION = re.compile(
    r"[（(]\s*\d{4}\s*年?\s*(?:第[一二三四五六七八九十]+次)?\s*(?:修正|修订|修改)\s*版?\s*[）)]"
)
_ARTICLE = re.compile(rf"第?\s*({_NUMERAL})\s*条(?:\s*之\s*({_NUMERAL}))?")
_NOTED_ARTICLE = re.compile(rf"第\s*({_NUMERAL})\s*条(?:\s*之\s*({_NUMERAL}))?")


def _title(title: str) -> str:
    """《中华人民共和国民法典》 and 《民法典》 name one law: keep the short form, without a
    version note."""
    inner = _VERSION.sub("", title[1:-1]).strip() or title[1:-1]
    if inner.startswith(_STATE) and len(inner) > len(_STATE):
        inner = inner[len(_STATE) :]
    return f"《{inner}》"


def _without_notes(text: str) -> str:
    """The text with every bracketed note removed, innermost first, so nested notes go too."""
    while True:
        stripped = _NOTE.sub("", text)
        if stripped == text:
            return text
        text = stripped


def _outer_title(text: str) -> tuple[int, int] | None:
    """Where the first 《title》 starts and ends, nested titles included: an
    interpretation 《最高人民法院关于适用《中华人民共和国民法典》…的解释（一）》 is cited by its
    outer title, not by the law it names inside."""
    start = text.find("《")
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        depth += (text[i] == "《") - (text[i] == "》")
        if depth == 0:
            return start, i + 1
    plain = _TITLE.search(text)  # unbalanced: the first complete title there is
    return (plain.start(), plain.end()) if plain else None


# A law named without its 《》, as models often write it (民法典第509条, 中华人民共和国劳动合同法
# 第三十九条): a run of Chinese characters ending as statute names end, right before an
# article. Without an article it is not read as a citation at all.
_BARE = re.compile(
    r"(?:依据|根据|按照|依照)?\s*"
    r"([\u4e00-\u9fff]{0,40}?(?:法典|法|条例|规定|解释|办法|意见|决定|规则|通则|细则))"
    r"((?:（[^（）]*）|\([^()]*\)|〔[^〔〕]*〕|\[[^\[\]]*\]|【[^【】]*】|\s)*"
    rf"(?:第\s*)?{_NUMERAL}\s*条.*)",
    re.DOTALL,
)


def _titled(text: str) -> str | None:
    """A bare law name with an article, written with its 《》; None for anything else."""
    match = _BARE.fullmatch(text.strip())
    if match is None:
        return None
    return f"《{match.group(1)}》{match.group(2)}"


def normalize_legal_basis(text: str) -> str:
    """One canonical form per provision: '《Law》第N条' (or '第N条之M'), the law by its short
    name (no leading 中华人民共和国, no version note), the first article only, paragraphs
    dropped. The article is read after the title, past any bracketed notes, and only
    inside a note when there is none outside. A document cited without an article keeps
    only its title. A law named without its 《》 but with an article (民法典第509条) reads
    as if it had them; other text without a 《title》 is compared as written, as the
    paper's code does."""
    span = _outer_title(text)
    if span is None:
        titled = _titled(text)
        return text.strip() if titled is None else normalize_legal_basis(titled)
    start, end = span
    after = text[end:].split("《", 1)[0]
    article = _ARTICLE.search(_without_notes(after))
    if article is None:
        # 《民法典》（第577条）: an article written only inside a note still names it
        article = _NOTED_ARTICLE.search(after)
    if article is None:
        return _title(text[start:end])
    number = f"第{chinese_number(article.group(1))}条"
    if article.group(2) is not None:
        number += f"之{chinese_number(article.group(2))}"
    return _title(text[start:end]) + number
