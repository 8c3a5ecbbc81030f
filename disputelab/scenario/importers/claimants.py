"""Who brings the claim in an AgentMediation case: the claimant rule of the importer.

The claimants (申请方) are the parties who bring the claim; every other party is a
respondent. `decide_claimants` weighs two readings, the title (which names the applicant
side first) and the brief and facts (who files, demands or refuses what); see the
importer's docstring (`agentmediation.py`, "Claimant") for the rule in full.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

_ROLE_SUFFIX = re.compile(r"(法定代表人|负责人|代表)+$")
_SPLIT = re.compile(r"[、，,及和]")


def name_cores(player: str) -> list[str]:
    """Name fragments to look for in the title: '王某等16名农民工' -> ['王某']."""
    base = _ROLE_SUFFIX.sub("", player.strip()) or player.strip()
    out = []
    for part in _SPLIT.split(base):
        head = part.split("等")[0] if "等" in part[1:] else part
        stripped = head.lstrip("某")
        head = stripped if len(stripped) >= 2 else head
        if head:
            out.append(head)
    return out


def longest_shared(core: str, title: str) -> int:
    """Title position of the longest (>= 2 chars) substring of `core` found in it."""
    best_len, best_pos = 0, -1
    for i in range(len(core)):
        for j in range(i + 2, len(core) + 1):
            k = title.find(core[i:j])
            if k >= 0 and (j - i > best_len or (j - i == best_len and k < best_pos)):
                best_len, best_pos = j - i, k
    return best_pos


# Group nouns, one family per kind of collective: a party named by one noun of a family
# ("科技公司员工代表") is the party the text names by another ("郭某等劳动者").
_FAMILIES = (
    ("员工", "职工", "工人", "劳动者", "农民工", "劳务人员", "教师", "司机", "工友", "班组"),
    ("业主", "住户", "居民", "商户", "租户", "承租人", "经营户"),
    ("村民", "农户", "苗农", "农民", "养殖户", "制种人", "渔民"),
    ("购房者", "购房人", "消费者", "学员", "游客", "投资者", "借款人"),
)
_ROLE_INSIDE = re.compile(r"法定代表人|负责人|实际控制人|经营者|项目经理|股东")
_RELATION = re.compile(
    r"(法定监护人|监护人|家属|家长|父母|夫妇|哥哥|姐姐|弟弟|妹妹|儿子|女儿|配偶|前妻之子|"
    r"外孙子外孙女)$"
)
_NAME = re.compile(r"[\u4e00-\u9fff]某[甲乙丙丁戊己]?")
_HEADCOUNT = re.compile(
    r"[\u4e00-\u9fff]某(?:、[\u4e00-\u9fff]某)*等[0-9一二三四五六七八九十百千]*[余多]?[名户位人]"
    r"|[0-9一二三四五六七八九十百千]+[余多]?[名户位人]"
)
_FORMAL = re.compile(
    r"(?<!驳回)(?:提起[^，。；]{0,16}?诉讼|诉至|诉到|起诉|自诉|申请(?:劳动|劳动人事)?仲裁|"
    r"提出仲裁|申请[^，。；]{0,2}?(?:调解|协调)|申请[^，。；]{0,4}?保全)"
)
_DEMAND = re.compile(
    r"(?<!按照)(?<![按依据应的此该其])(?:要求|请求|主张|索要|索赔|催讨|催要|催收|讨要|追讨|"
    r"追索|讨薪|投诉|申请理赔|寻求帮助|寻求解决)"
)
# Refusing or owing what is claimed marks the other side.
_REFUSAL = re.compile(
    r"拒不(?:支付|缴纳|交纳|履行|归还|偿还|给付|赔偿|退还|协商|出面|整改)|拒绝(?:支付|赔偿|"
    r"承担|退还|退款|履行|给付|缴纳|偿还|出面)|拒缴|拒付|拖欠|欠缴|欠付|未支付|未足额|未履行|推诿|推脱"
)
_VIEW = re.compile(r"认为|声称|表示|承认")
_CLAUSE = "，,；;：:"
_JOIN = re.compile(r"[、和及]|以及")
_PREPOSITION = "将向对于被给找帮替与和同跟"
# 某 and a short qualifier open a party's name: 某小区物业公司.
_QUALIFIED = re.compile(r"某[^，,；;：:、]{0,3}$")
# A role noun standing right before a name makes it the subject: 电动自行车车主杨某.
_APPOSITIVE = re.compile(r"(车主|男方|女方|原告|申请人|当事人|老板|承包人|经营者|负责人)$")
_OTHER_SIDE = re.compile(r"为由|为被告|为共同被")
# What may stand before a subject in its clause: times and connectives.
_LEAD = re.compile(
    r"[0-9年月日号初底中旬上下半前后至今近来以当天时遂故便是因此为经其中另又也均都共已曾多次该全体部分、\s]"
)


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    players: frozenset[int]


def _aliases(players: list[str]) -> dict[str, dict[int, int]]:
    """alias -> {player index: strength}; strength 2 names the party itself, 1 its group
    or the person it stands for."""
    table: dict[str, dict[int, int]] = {}

    def add(alias: str, i: int, strength: int) -> None:
        alias = alias.strip()
        alias = alias[1:] if alias.startswith("某") and len(alias) > 2 else alias
        if len(alias) >= 2:
            slot = table.setdefault(alias, {})
            slot[i] = max(slot.get(i, 0), strength)

    for i, player in enumerate(players):
        base = _ROLE_SUFFIX.sub("", player.strip()) or player.strip()
        add(player, i, 2)
        add(base, i, 2)
        nouns = [(base.rfind(n), fam) for fam in _FAMILIES for n in fam if n in base]
        if nouns:  # a collective: its members' names and its group, never its employer
            for name in _NAME.findall(base.split("为代表")[0].split("等")[0]):
                add(name, i, 2)
            for noun in max(nouns)[1]:
                add(noun, i, 1)
            continue
        relation = _RELATION.search(base)
        if relation and relation.start() > 0:
            add(base[: relation.start()], i, 1)
            add(relation.group(1), i, 1)
            continue
        for part in _ROLE_INSIDE.split(base):
            for name in _SPLIT.split(part):
                add(name, i, 2)
                add(name.replace("有限", "").replace("股份", ""), i, 2)
    return table


def _mentions(
    text: str, table: dict[str, dict[int, int]], groups: frozenset[int]
) -> list[_Mention]:
    """Leftmost-longest matches of the aliases; a name does not match inside a longer one
    (王某 in 王某甲), and the strongest alias holder wins a shared alias."""
    out: list[_Mention] = []
    i = 0
    while i < len(text):
        best = ""
        for alias in table:
            if len(alias) > len(best) and text.startswith(alias, i):
                after = text[i + len(alias) : i + len(alias) + 1]
                if not (alias.endswith("某") and after and after in "甲乙丙丁戊己"):
                    best = alias
        head = _HEADCOUNT.match(text, i) if groups else None
        if head and best and max(table[best].values()) == 2 and not table[best].keys() <= groups:
            head = None  # 程某等70余名学员: 程某 is a party of its own, the rest its group
        if head and head.end() - i > len(best):
            out.append(_Mention(i, head.end(), groups))
            i = head.end()
        elif best:
            top = max(table[best].values())
            out.append(
                _Mention(i, i + len(best), frozenset(p for p, s in table[best].items() if s == top))
            )
            i += len(best)
        else:
            i += 1
    return out


@dataclass
class _Evidence:
    """What the brief and facts say: each party's claim score, what is held against it,
    and whether it files a formal claim."""

    claims: dict[int, int] = field(default_factory=dict)
    against: dict[int, int] = field(default_factory=dict)
    formal: set[int] = field(default_factory=set)

    def net(self, i: int) -> int:
        return self.claims.get(i, 0) - self.against.get(i, 0)


def _clause_subject(
    text: str, mentions: list[_Mention], start: int, end: int, own: bool
) -> list[_Mention] | None:
    """The parties acting in text[start:end], a clause: its first mention standing where
    a subject stands, with any joined to it by 、/和/及 (and 与 in the verb's own clause).
    [] when something else stands there (a non-party 某, a passive, an object); None when
    the clause has no subject of its own."""
    view = max((m.end() for m in _VIEW.finditer(text, start, end)), default=start)
    inside = [m for m in mentions if start <= m.start and m.end <= end]
    after_view = [m for m in inside if m.start >= view]
    if view > start and after_view:  # 甲认为乙拒绝…: 乙 acts
        start, inside = view, after_view
    if inside:
        before = _QUALIFIED.sub("", _LEAD.sub("", text[start : inside[0].start]))
        if before[-1:] and before[-1] in _PREPOSITION:
            return []  # 向某公司催要: an object, the actor is elsewhere
        if "某" in before or "被" in before or (len(before) > 3 and not _APPOSITIVE.search(before)):
            return []  # a non-party, a passive or a long lead-in stands where the subject would
        chain = inside[:1]
        for nxt in inside[1:]:
            joint = text[chain[-1].end : nxt.start]
            if not (_JOIN.fullmatch(joint) or (own and joint == "与")):
                break
            chain.append(nxt)
        return chain
    gap = text[start:end]
    return [] if "某" in gap or "被" in gap else None


def _subject(text: str, mentions: list[_Mention], lo: int, verb: int) -> list[_Mention]:
    """The party (or parties) acting at `verb` in the sentence from `lo`: its own clause's
    subject; failing that, the one whose view the sentence reports (甲认为…，遂诉至法院);
    failing that, the nearest earlier clause's."""
    marker = _OTHER_SIDE.search(text, lo, verb)
    if marker:  # 甲以乙…为由/为被告: 甲 acts, 乙 is the other side
        k = text.rfind("以", lo, marker.start())
        verb = k if k >= 0 else verb
    starts = [lo] + [k + 1 for k in range(lo, verb) if text[k] in _CLAUSE]
    own = _clause_subject(text, mentions, starts[-1], verb, own=True)
    if own is not None:
        return own
    for view in reversed(list(_VIEW.finditer(text, lo, starts[-1]))):
        clause = max(s for s in starts if s <= view.start())
        found = _clause_subject(text, mentions, clause, view.start(), own=True)
        if found:
            return found
    for clause, nxt in zip(reversed(starts[:-1]), reversed(starts[1:]), strict=True):
        found = _clause_subject(text, mentions, clause, nxt - 1, own=False)
        if found is not None:
            return found
    return []


def _evidence(text: str, mentions: list[_Mention]) -> _Evidence:
    ev = _Evidence()
    sentences = [(m.start(), m.end()) for m in re.finditer(r"[^。；！？\n]+", text)]
    events = [(m, 2) for m in _FORMAL.finditer(text)] + [(m, 1) for m in _DEMAND.finditer(text)]
    events += [(m, -1) for m in _REFUSAL.finditer(text)]
    for verb, weight in events:
        lo, hi = next((s, e) for s, e in sentences if s <= verb.start() < e)
        subject = _subject(text, mentions, lo, verb.start())
        acting = {p for m in subject for p in m.players}
        if text[verb.start() - 1 : verb.start()] == "被":  # 被起诉, 被拖欠: acted upon
            for p in acting if weight > 0 else ():
                ev.against[p] = ev.against.get(p, 0) + weight
            continue
        if weight < 0:
            for p in acting:
                ev.against[p] = ev.against.get(p, 0) + 1
            continue
        stop = min([k for k in (text.find(c, verb.end(), hi) for c in _CLAUSE) if k >= 0] + [hi])
        # With no subject found, what stands before the verb may be the actor: only
        # what follows it counts as the other side.
        first = subject[0].start if subject else verb.end()
        start = max([text.rfind(c, lo, first) for c in _CLAUSE] + [lo - 1]) + 1
        start = start if subject else verb.end()
        for m in mentions:
            if start <= m.start and m.end <= stop and m not in subject:
                for p in m.players - acting:
                    ev.against[p] = ev.against.get(p, 0) + weight
        for p in acting:
            ev.claims[p] = ev.claims.get(p, 0) + weight
            if weight == 2:
                ev.formal.add(p)
    return ev


@dataclass(frozen=True)
class ClaimantDecision:
    """The claimant side (player indices), how it was decided, and why it is uncertain
    ('' when it is not)."""

    claimants: tuple[int, ...]
    basis: str
    uncertain: str = ""


def _title_side(
    title: str, players: list[str], table: dict[str, dict[int, int]], groups: frozenset[int]
) -> tuple[frozenset[int], bool, str]:
    """(side, clear, why not clear) from the title: the parties named before 与/和."""
    mentions = _mentions(title, table, groups)
    covered = {k for m in mentions for k in range(m.start, m.end)}
    split = next((k for k, c in enumerate(title) if c == "与" and k not in covered), -1)
    if split < 0:
        split = next((k for k, c in enumerate(title) if c == "和" and k not in covered), -1)
    first = [m for m in mentions if m.end <= split]
    if split >= 0 and first:
        side = frozenset(p for m in first for p in m.players)
        if len(first[0].players) > 1:
            names = "、".join(players[p] for p in sorted(first[0].players))
            return side, False, f"the title names {names} together first"
        return side, True, ""
    if split < 0:
        named = [p for m in mentions for p in sorted(m.players)]
        return frozenset(named[:1]), False, "the title names no sides (no 与)"
    later = {p for m in mentions if m.start > split for p in m.players}
    rest = frozenset(range(len(players))) - later
    if later and rest:
        return rest, False, "the title's first party is none of the players"
    positions = [
        (longest_shared("".join(name_cores(p)), title[:split]), i) for i, p in enumerate(players)
    ]
    found = sorted((k, i) for k, i in positions if k >= 0)
    return frozenset(i for _, i in found[:1]), False, "the title names no player first"


def decide_claimants(
    title: str, players: list[str], brief: str, facts: Sequence[str] = ()
) -> ClaimantDecision:
    """Who brings the claim, from the title and the brief and facts (module docstring)."""
    table = _aliases(players)
    groups = frozenset(
        i for i, p in enumerate(players) if any(n in p for f in _FAMILIES for n in f)
    )
    t_side, t_clear, t_why = _title_side(title, players, table, groups)
    text = "。".join([brief, *facts])
    ev = _evidence(text, _mentions(text, table, groups))
    top = max((ev.net(i) for i in range(len(players))), default=0)
    b_side = frozenset(i for i in range(len(players)) if top > 0 and ev.net(i) == top)
    formal = bool(b_side & ev.formal)

    def names(side: frozenset[int]) -> str:
        return "、".join(players[i] for i in sorted(side))

    if b_side and t_side & b_side:
        side, basis, why = (t_side if t_clear else b_side), "title and brief", ""
    elif t_clear and t_side & ev.formal:  # both sides file: the title says whose case it is
        side, basis, why = t_side, "title", ""
    elif b_side and (formal or not t_clear):
        side, basis = b_side, "brief"
        why = "" if formal else f"{t_why}; only a demand in the brief names {names(b_side)}"
    elif b_side:  # a demand in the brief against a title that names one side
        if any(ev.net(i) < 0 for i in t_side):
            side, basis = b_side, "brief"
        else:
            side, basis = t_side, "title"
        why = f"the title names {names(t_side)} first; only a demand in the brief names "
        why += names(b_side)
    elif t_clear:
        side, basis, why = t_side, "title", ""
    else:
        side, basis = t_side or frozenset({0}), "title" if t_side else "first player"
        why = f"{t_why} and the brief names no one bringing a claim"
    others = sorted(i for i in ev.formal - side if ev.net(i) > 0)
    if others and not why:
        why = f"{names(frozenset(others))} also files a claim"
    if len(side) == len(players):
        lead = min(side, key=lambda i: (i not in t_side, i))
        side, why = (
            frozenset({lead}),
            why or f"every party ({names(frozenset(range(len(players))))}) reads as a claimant",
        )
    return ClaimantDecision(tuple(sorted(side)), basis, why)


# Case file -> the raw-record file beside it, per layout (module docstring).
