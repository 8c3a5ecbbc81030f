"""An exemplar's category and repair style, inferred from its text by a stated rule.

The template remediator (offline) reads an exemplar's category (which norm the violation
breaks) and style (what the rewrite does to it); exemplars written by people or models,
such as the remediator paper's released ones, carry neither. This module reads both from
the text, with lexicons of our own in Chinese and English (`CATEGORY_WORDS`,
`STYLE_WORDS`), so that how such an exemplar is used depends on what it says:

- **Category, from the violating sentence.** The phrase banks of `norms` are heard first
  (`norms.read_tone`: the rule agents' own violations); otherwise each category counts
  the keywords of its lexicon found in the sentence, and the one with most wins, ties to
  the more severe (`norms.SEVERITY`). No keyword found: no category (`""`), and the
  template remediator never imitates the exemplar.
- **Style, from what the rewrite adds.** Only keywords found in the remediation and not
  in the violation count: a rewrite that keeps the violation's "sorry" adds no apology.
  A rewrite whose last price is nearer the listener's side than the violation's (lower,
  for the side that asks more) concedes. Of the styles found the strongest repair wins,
  in the order concede, alternatives, empathise, apologise (`STYLES`); none found:
  `restate`.

Every inferred label says so (`Labels.source`: the rule and the words that decided).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from disputelab.protocols.bilateral.agents.norms import CATEGORIES, SEVERITY, read_tone

RULE = "lexicon/1"


def _words(*groups: str) -> tuple[str, ...]:
    """Keywords written as '|'-separated lists."""
    return tuple(w for g in groups for w in g.split("|") if w)


# Words that mark a violation of each category. Ours; substrings, matched case-blind.
CATEGORY_WORDS: dict[str, tuple[str, ...]] = {
    "insulting": _words(
        "愚蠢|蠢|笨|无知|可笑|荒谬|外行|幼稚|天真|白痴|垃圾|开玩笑|懂不懂",
        "不懂行|离谱|寒酸|小气|捣乱|丢人",
        "stupid|idiot|clueless|amateur|ridiculous|naive|pathetic|feeble|joke",
    ),
    "dismissive": _words(
        "不考虑|不可行|不可能|不可接受|不能接受|无法接受|没兴趣|不关我|与我无关",
        "你的问题|别浪费|浪费时间|没什么好谈|爱买不买|随便你|免谈|不想听",
        "少一分都不行",
        "not my problem|waste of|don't care|take it or leave it|not interested",
        "mean nothing|not ours",
    ),
    "self-serving": _words(
        "底线|最低价格|最低售价|最低报价|最终价格|底价|利润|利益|只关心",
        "我们的成本|不能再低|不低于|赚",
        "my profit|margin|bottom line|my pocket|come first|my price",
    ),
    "dishonest": _words(
        "其他买家|别的买家|其他客户|别的客户|别人出价|有人愿意|抢着|供不应求",
        "最后的优惠|最后一次机会|错过|相信我|绝对",
        "other buyers|everyone else|believe me|trust me|last chance|twice that",
        "other interest",
    ),
    "culture": _words(
        "文化|习俗|风俗|传统|你们那边|你们那里|你们的方式|客套|规矩|礼节",
        "我们的方式",
        "custom|culture|your way|tradition|the direct way",
    ),
}

# Words a rewrite adds for each repair style. Ours; substrings, matched case-blind.
STYLE_WORDS: dict[str, tuple[str, ...]] = {
    "concede": _words(
        "让步|让一点|降到|降低到|优惠给您|折扣|便宜一些|可以少",
        "meet you at|come down|discount|lower our",
    ),
    "alternatives": _words(
        "合作|长期|共赢|双赢|互惠|其他方式|其他合理|其他方案|双方都满意",
        "进一步讨论|进一步商讨|再商量|一起|解决方案|沟通",
        "partnership|long-term|together|other ways|both sides|work out",
    ),
    "empathise": _words(
        "理解|明白|体谅|尊重|感谢|谢谢|您的需求|您的立场|您的预算",
        "understand|respect|appreciate|thank",
    ),
    "apologise": _words(
        "抱歉|对不起|不好意思|请原谅|请见谅|遗憾",
        "sorry|apolog|regret|put that badly",
    ),
}
# The strongest repair first: what a rewrite is taken as when it does several.
STYLE_ORDER = ("concede", "alternatives", "empathise", "apologise")
# Prices as the released dialogues write them ($50, 30美元, 5,000元).
_PRICE = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s*(?:美元|元|块)")


@dataclass(frozen=True)
class Labels:
    category: str  # a norms category, or "" when none could be read
    style: str  # a key of exemplars.STYLES
    source: str  # how they were had: given, or the rule and the words that decided


def _found(text: str, words: tuple[str, ...]) -> list[str]:
    low = text.lower()
    return [w for w in words if w.lower() in low]


def infer_category(violation: str) -> tuple[str, str]:
    """The category of a violating sentence and why (see the module docstring)."""
    heard = read_tone(violation).worst
    if heard is not None:
        return heard, "a phrase of the rule agents' banks"
    hits = {c: _found(violation, CATEGORY_WORDS[c]) for c in CATEGORIES}
    severity = {c: i for i, c in enumerate(sorted(CATEGORIES, key=lambda c: -SEVERITY[c]))}
    best = min(CATEGORIES, key=lambda c: (-len(hits[c]), severity[c]))
    if not hits[best]:
        return "", "no category word"
    return best, "words " + ", ".join(hits[best][:4])


def _prices(text: str) -> list[float]:
    return [float((a or b).replace(",", "")) for a, b in _PRICE.findall(text)]


def infer_style(violation: str, remediation: str) -> tuple[str, str]:
    """The repair style of a rewrite of `violation` and why (see the module docstring)."""
    low = violation.lower()
    added = {
        s: [w for w in _found(remediation, STYLE_WORDS[s]) if w.lower() not in low]
        for s in STYLE_ORDER
    }
    before, after = _prices(violation), _prices(remediation)
    if before and after and after[-1] < before[-1]:
        added["concede"].insert(0, f"price {before[-1]:g} -> {after[-1]:g}")
    for style in STYLE_ORDER:
        if added[style]:
            return style, "adds " + ", ".join(added[style][:4])
    return "restate", "adds no repair word"


def infer(violation: str, remediation: str) -> Labels:
    """Both labels of an exemplar, inferred from its text, with the rule that read them."""
    category, why_c = infer_category(violation)
    style, why_s = infer_style(violation, remediation)
    source = (
        f"inferred by rule {RULE}: category from the violation ({why_c}); "
        f"style from what the remediation adds ({why_s})"
    )
    return Labels(category, style, source)
