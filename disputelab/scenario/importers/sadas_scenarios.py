"""Chinese two-party price negotiations built from SADAS dialogues (`importers.sadas`).

The released dialogues all open the same scripted way for one negotiation setting, so a
scenario is made per setting, not per dialogue: the topic (an industrial product, a
house, a salary), the seller side's opening price and the buyer side's. The rules:

- **Topic**: the one whose words the dialogues use most (商品/产品 for a product, 房 for a
  house, 薪/工资 for a salary); a product when none is used.
- **Sides**: `seller`/`卖方` and `buyer`/`买方` (and 求职者, HR) say who is who; other
  labels (`人物A`/`人物B`) are told apart by price: whoever names the higher price first is
  the seller side (for a salary, the job seeker).
- **Prices**: a line's own price is the last amount it names that the other side has not
  named before (an amount the other side said is a quote, not an offer). Each side's
  first own price is its opening (its target); the seller side's reservation is the
  lowest price it offered in any dialogue of the setting, the buyer side's the highest
  it offered: the bounds the dialogues show, since they state no walk-away price.
- What the dialogues do not give is assumed and recorded in `assumptions`: fallbacks
  (no deal, utility 0.3) and personas (the seller side competing at reactivity 0.3, the
  buyer side compromising at 0.5, as the built-in price scenarios have them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from disputelab.scenario.importers.sadas import Line, SadasRecord
from disputelab.scenario.schema import Fallback, NumericTerm, Party, Persona, Scenario

_AMOUNT = re.compile(
    r"\$\s?(?P<usd>\d[\d,]*(?:\.\d+)?)\s*(?P<wan1>万)?"
    r"|(?P<num>\d[\d,]*(?:\.\d+)?)\s*(?P<wan2>万)?\s*(?:美元|元|块)"
)
_SELLER = re.compile(r"^(?:seller|卖方|卖家|求职者)$", re.I)
_BUYER = re.compile(r"^(?:buyer|买方|买家|hr|雇主|招聘方)$", re.I)
FALLBACK_UTILITY = 0.3


@dataclass(frozen=True)
class Topic:
    """A negotiation topic of the released simulator, in our own Chinese words."""

    key: str
    words: tuple[str, ...]
    domain: str
    title: str
    term: str
    unit: str
    seller: tuple[str, str, str]  # id, name (also its role), objective
    buyer: tuple[str, str, str]
    background: str  # with {seller} and {buyer}, the opening prices

    def party(self, side: str) -> Party:
        pid, name, objective = self.seller if side == "seller" else self.buyer
        persona = (
            Persona(strategy="competing", reactivity=0.3)
            if side == "seller"
            else Persona(strategy="compromising", reactivity=0.5)
        )
        return Party(
            id=pid,
            name=name,
            role=name,
            objective=objective,
            fallback=Fallback(description="谈判破裂，没有成交。", utility=FALLBACK_UTILITY),
            preferences={},
            weights={},
            persona=persona,
        )


TOPICS = (
    Topic(
        "salary",
        ("薪", "工资", "待遇", "面试", "入职", "录用", "HR"),
        "intra-organisational",
        "求职者与 HR 商谈月薪",
        "月薪",
        "每月",
        ("candidate", "求职者", "争取尽可能高的月薪，同时与 HR 保持良好的关系。"),
        ("hr", "HR", "在预算之内以尽可能低的月薪录用对方，并让对方愿意长期留下。"),
        "一位求职者通过了面试，拿到了录用通知，正与公司的 HR 商谈月薪；岗位和入职"
        "日期已经确定。HR 给出的月薪是{buyer}，求职者希望拿到{seller}。",
    ),
    Topic(
        "house",
        ("房", "住宅", "户型", "小区"),
        "transactional",
        "住房买卖的成交价谈判",
        "成交价",
        "",
        ("seller", "卖方", "尽快以尽可能高的价格卖出房子。"),
        ("buyer", "买方", "以尽可能低的价格买下房子，并顺利完成交易。"),
        "房主想出售一套住房，一位买家有意购买。双方就成交价进行谈判，交房日期已经"
        "谈妥。卖方要价{seller}，买方出价{buyer}。",
    ),
    Topic(
        "product",
        ("商品", "产品", "工业", "货", "产能"),
        "business-to-business",
        "工业商品的单价谈判",
        "单价",
        "每单元",
        ("seller", "卖方", "以尽可能高的单价卖出这批商品，并争取与买方长期合作。"),
        ("buyer", "买方", "以尽可能低的单价买下这批商品，并找到一家可靠的长期供应商。"),
        "一家制造商有一批特殊工业商品的富余产能，愿意一次性出售；另一家企业正急需"
        "这批商品。双方就单价进行谈判，数量和交付已经谈妥。卖方开价{seller}，买方"
        "还价{buyer}。",
    ),
)


def amounts(text: str) -> list[float]:
    """The prices written in `text`, in order: "$50", "30美元", "5,000元", "60万元"."""
    out = []
    for m in _AMOUNT.finditer(text):
        raw = m.group("usd") or m.group("num")
        value = float(raw.replace(",", ""))
        out.append(value * (10_000 if (m.group("wan1") or m.group("wan2")) else 1))
    return out


def money(amount: float) -> str:
    return "$" + f"{amount:,.2f}".rstrip("0").rstrip(".")


@dataclass
class Setting:
    """One negotiation setting: its topic, each side's opening, and its dialogues."""

    topic: Topic
    seller_open: float
    buyer_open: float
    records: list[SadasRecord] = field(default_factory=list)
    seller_offers: list[float] = field(default_factory=list)
    buyer_offers: list[float] = field(default_factory=list)

    def scenario_id(self, prefix: str = "sadas") -> str:
        def short(x: float) -> str:  # 700000 -> "700000", 37.5 -> "37_5": id characters
            return str(int(x)) if x.is_integer() else f"{x:f}".rstrip("0").replace(".", "_")

        return f"{prefix}-{self.topic.key}-{short(self.seller_open)}-{short(self.buyer_open)}"


def topic_of(lines: Sequence[Line]) -> Topic:
    """The topic whose words the lines use most (a product when none is used)."""
    text = " ".join(ln.text for ln in lines)
    hits = [(sum(text.count(w) for w in t.words), -i, t) for i, t in enumerate(TOPICS)]
    best = max(hits, key=lambda h: (h[0], h[1]))
    return best[2] if best[0] else TOPICS[-1]


def own_prices(lines: Sequence[Line], sides: dict[str, str]) -> list[tuple[str, float | None]]:
    """Each line's side and own price: the last amount it names that the other side has
    not named before (None when it names none of its own)."""
    said: dict[str, set[float]] = {"seller": set(), "buyer": set()}
    out: list[tuple[str, float | None]] = []
    for ln in lines:
        side = sides.get(ln.speaker, "")
        other = "buyer" if side == "seller" else "seller"
        found = amounts(ln.text)
        own = [a for a in found if a not in said.get(other, set())]
        out.append((side, own[-1] if own else None))
        said.setdefault(side, set()).update(found)
    return out


def sides_of(lines: Sequence[Line]) -> dict[str, str]:
    """Speaker label -> `seller` or `buyer`: by the label where it says, else the speaker
    whose first price is the higher one is the seller side."""
    sides: dict[str, str] = {}
    first: dict[str, float] = {}
    for ln in lines:
        if _SELLER.match(ln.speaker):
            sides[ln.speaker] = "seller"
        elif _BUYER.match(ln.speaker):
            sides[ln.speaker] = "buyer"
        found = amounts(ln.text)
        if found and ln.speaker not in first:
            first[ln.speaker] = found[0]
    unknown = [s for s in dict.fromkeys(ln.speaker for ln in lines) if s not in sides]
    if len(unknown) == 2 and all(s in first for s in unknown) and len(set(first.values())) > 1:
        high, low = sorted(unknown, key=lambda s: -first[s])
        sides[high], sides[low] = "seller", "buyer"
    return sides


def setting_of(record: SadasRecord) -> tuple[Setting | None, str]:
    """The setting a record's dialogue negotiates, or None with why there is none."""
    sides = sides_of(record.lines)
    if sorted(set(sides.values())) != ["buyer", "seller"]:
        return None, "cannot tell the seller side from the buyer side"
    prices = own_prices(record.lines, sides)
    opening = {}
    for side, price in prices:
        if price is not None and side not in opening:
            opening[side] = price
    if len(opening) < 2:
        missing = "seller" if "seller" not in opening else "buyer"
        return None, f"the {missing} side names no price of its own"
    if opening["seller"] <= opening["buyer"]:
        return None, "the seller side opens no higher than the buyer side"
    setting = Setting(topic_of(record.lines), opening["seller"], opening["buyer"])
    setting.seller_offers = [p for s, p in prices if s == "seller" and p is not None]
    setting.buyer_offers = [p for s, p in prices if s == "buyer" and p is not None]
    return setting, ""


def group_settings(records: Sequence[SadasRecord]) -> tuple[list[Setting], list[tuple[int, str]]]:
    """The settings the records negotiate, each with its dialogues and every price its
    sides offered; and the records that give none (number, why)."""
    found: dict[tuple[str, float, float], Setting] = {}
    skipped = []
    for record in records:
        one, why = setting_of(record)
        if one is None:
            skipped.append((record.number, why))
            continue
        key = (one.topic.key, one.seller_open, one.buyer_open)
        setting = found.setdefault(key, Setting(one.topic, one.seller_open, one.buyer_open))
        setting.records.append(record)
        setting.seller_offers += one.seller_offers
        setting.buyer_offers += one.buyer_offers
    return list(found.values()), skipped


def scenario_of(setting: Setting, source: str, prefix: str = "sadas") -> Scenario:
    """The scenario of one setting (the rules in the module docstring)."""
    t = setting.topic
    floor = min([*setting.seller_offers, setting.seller_open])
    ceiling = max([*setting.buyer_offers, setting.buyer_open])
    seller_id, buyer_id = t.seller[0], t.buyer[0]
    numbers = [r.number for r in setting.records]
    shown = ", ".join(str(n) for n in numbers[:10]) + (" ..." if len(numbers) > 10 else "")
    first = [t.party("seller"), t.party("buyer")]
    parties = first if t.key != "salary" else first[::-1]  # HR opens, as in the simulator
    n = len(numbers)
    return Scenario(
        id=setting.scenario_id(prefix),
        title=f"{t.title}（SADAS：{money(setting.seller_open)} 对 {money(setting.buyer_open)}）",
        domain=t.domain,
        language="zh",
        background=t.background.format(
            seller=money(setting.seller_open), buyer=money(setting.buyer_open)
        ),
        history=f"由 {source} 中的 {n} 段对话（记录 {shown}）整理而成。",
        parties=parties,
        topics=[],
        terms=[
            NumericTerm(
                id="price",
                name=t.term,
                unit=t.unit,
                targets={seller_id: setting.seller_open, buyer_id: setting.buyer_open},
                reservations={seller_id: floor, buyer_id: ceiling},
            )
        ],
        assumptions=_assumptions(setting, floor, ceiling),
    )


def _assumptions(setting: Setting, floor: float, ceiling: float) -> list[str]:
    n = len(setting.records)
    out = [
        f"reservations: the seller side's is the lowest price it offered in the {n} "
        f"dialogue(s) ({money(floor)}), the buyer side's the highest it offered "
        f"({money(ceiling)}); the dialogues state no walk-away price",
        f"fallbacks: no deal, utility {FALLBACK_UTILITY} for both sides (the data gives none)",
        "personas: the seller side competing at reactivity 0.3, the buyer side compromising "
        "at 0.5, as the built-in price scenarios have them",
    ]
    if ceiling < floor:
        out.append(
            f"no zone of agreement: the buyer side never offered more than {money(ceiling)} "
            f"and the seller side never less than {money(floor)}"
        )
    return out
