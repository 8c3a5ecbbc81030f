"""Import AgentMediation case records (AgentMediation paper) into legal Scenarios.

Each JSONL line is one preprocessed case: `name`, `basic_back`, `players`,
`player_number`, `point`, `article`, `fact` and, optionally, `retrieve_articles`. The
case text maps onto the scenario directly: the brief becomes the background, and the
facts, the point of contention and the cited articles go into `legal`. Everything a rule
agent needs beyond that (topics, preferences, weights, fallbacks, personas) is not in the
data, so it is derived as follows. These are assumptions, and this docstring is where
they are written down.

Dispute type.
    Taken from a `raw.jsonl` beside the input file: the record whose `filename` equals
    the case `name`, 2nd space-separated token of `content.关键词`. Without that file,
    or for a case it lacks, the type is cut from the title: the text up to the first
    纠纷 or 争议, after the last party mentioned; it is left empty when the cut still
    looks like it holds a party name.

Claimant.
    The title names the parties as "甲与乙…纠纷", applicant first. A player's core name
    drops role suffixes (法定代表人, 负责人, 代表) and a leading 某; collectives such as
    "X公司员工代表" also match the title's worker or owner nouns (劳动者, 业主, ...). The
    player whose core name appears earliest in the title is the claimant (申请方); if
    none appears, the first player is. Every other player is a respondent (被申请方).

Topics: a settlement ladder.
    The cases carry no option lists, and `point` is the gold answer a mediator's points
    of contention are scored against, so it must not shape the public topics. Every case
    gets the same three topics instead: `liability` 责任划分 (A respondent bears all ...
    C equal shares ... E respondent bears none), `amount` 赔付/给付比例 (A..E = 100%,
    80%, 60%, 40%, 20% of the disputed sum) and `schedule` 履行方式 (A lump sum within 30
    days, B three instalments over 3 months, C instalments over 12 months).

Preferences.
    Claimants rank liability A>B>C (D, E unacceptable), amount A>B>C>D (E unacceptable),
    schedule A>B>C. Respondents hold the mirror: liability E>D>C (A, B unacceptable),
    amount E>D>C>B (A unacceptable), schedule C>B>A. The zone of agreement is liability
    C with amount B to D.

Weights, fallback and persona.
    All come from h = zlib.crc32(name + player), so an import is reproducible. Claimants
    weigh amount 40-50, liability 30-40; respondents weigh liability 35-45, amount 35-45;
    schedule takes the rest (10-30). The fallback is litigation, utility 0.30-0.45. The
    strategy is compromising for half the hash space, competing and collaborating for a
    quarter each; reactivity is 0.20-0.50.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from disputelab.scenario.schema import (
    Fact,
    Fallback,
    LegalContext,
    Option,
    Party,
    Persona,
    Scenario,
    Strategy,
    Topic,
    TopicPreference,
)

CLAIMANT = "申请方"
RESPONDENT = "被申请方"


class AgentMediationError(ValueError):
    """The input file cannot be read at all (per-line faults go to `problems`)."""


class _Fact(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    source: StrictStr = Field(alias="来源")
    content: StrictStr = Field(alias="内容")


class _Facts(BaseModel):
    facts: list[_Fact]


class _Record(BaseModel):
    """One case line; extra keys are ignored, missing or mistyped ones are errors."""

    name: StrictStr = Field(min_length=1)
    basic_back: StrictStr = Field(min_length=1)
    players: list[StrictStr]
    player_number: StrictInt
    point: StrictStr
    article: list[StrictStr]
    fact: _Facts
    retrieve_articles: list[StrictStr] = Field(default_factory=list)


@dataclass
class AgentMediationImport:
    scenarios: list[Scenario] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)


def _options(*labels: str) -> list[Option]:
    return [Option(id=chr(ord("A") + i), label=label) for i, label in enumerate(labels)]


TOPICS: tuple[Topic, ...] = (
    Topic(
        id="liability",
        name="责任划分",
        description="被申请方在本纠纷中应承担的责任份额。",
        options=_options(
            "被申请方承担全部责任",
            "被申请方承担主要责任",
            "双方承担同等责任",
            "被申请方承担次要责任",
            "被申请方不承担责任",
        ),
    ),
    Topic(
        id="amount",
        name="赔付/给付比例",
        description="被申请方向申请方赔付或给付的金额占争议金额的比例。",
        options=_options(
            "争议金额的100%",
            "争议金额的80%",
            "争议金额的60%",
            "争议金额的40%",
            "争议金额的20%",
        ),
    ),
    Topic(
        id="schedule",
        name="履行方式",
        description="约定款项的支付或义务的履行方式与期限。",
        options=_options(
            "30日内一次性履行完毕",
            "3个月内分三期履行",
            "12个月内分期履行",
        ),
    ),
)

# (ranking, unacceptable) per topic, for each side.
_CLAIMANT_PREFS = {
    "liability": (["A", "B", "C"], ["D", "E"]),
    "amount": (["A", "B", "C", "D"], ["E"]),
    "schedule": (["A", "B", "C"], []),
}
_RESPONDENT_PREFS = {
    "liability": (["E", "D", "C"], ["A", "B"]),
    "amount": (["E", "D", "C", "B"], ["A"]),
    "schedule": (["C", "B", "A"], []),
}
_OBJECTIVE = {
    CLAIMANT: "让对方承担应有的责任，尽可能足额、尽快地获得赔付或给付。",
    RESPONDENT: "尽量减轻自身责任和给付金额，并争取较宽松的履行期限。",
}
_FALLBACK = "调解不成则诉至法院，须承担诉讼的时间、费用以及判决结果的不确定性。"

_ROLE_SUFFIX = re.compile(r"(法定代表人|负责人|代表)+$")
_SPLIT = re.compile(r"[、，,及和]")
# Collective parties are named by role in one place and by another noun in the other
# ("科技公司员工代表" vs "郭某等劳动者与某科技公司"); each group is one side's vocabulary.
_GROUP_NOUNS = (
    ("员工", "职工", "工人", "劳动者", "农民工", "劳务人员", "教师"),
    ("业主", "租户", "商户", "住户", "居民", "村民", "农户", "经营户"),
)
_CAUSE_END = re.compile(r"纠纷|争议")
_ORG = re.compile(
    r"某[^与、，]{0,12}?(公司|医院|学校|中心|卫生院|商行|银行|集团|社区|村委会|居委会|"
    r"委员会|协会|店|厂|局|院|村)(有限公司|分公司|分行|支行)?"
)
_PERSON = re.compile(r"[\u4e00-\u9fff]某[甲乙丙丁戊]?")
_COUNT_PREFIX = re.compile(
    r"^等?([0-9]+|[一二两三四五六七八九十百千]+)?[余多]?[名户位人家]?"
    r"(商铺业主|业主|居民|员工|村民|人)?"
)


def _cores(player: str) -> list[str]:
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


def _longest_shared(core: str, title: str) -> int:
    """Title position of the longest (>= 2 chars) substring of `core` found in it."""
    best_len, best_pos = 0, -1
    for i in range(len(core)):
        for j in range(i + 2, len(core) + 1):
            k = title.find(core[i:j])
            if k >= 0 and (j - i > best_len or (j - i == best_len and k < best_pos)):
                best_len, best_pos = j - i, k
    return best_pos


def _title_position(player: str, title: str) -> float:
    """Earliest place in the title that names this player, or inf."""
    hits = [title.find(c) for c in _cores(player) if c in title]
    for nouns in _GROUP_NOUNS:
        if any(n in player for n in nouns):
            hits += [title.find(n) for n in nouns if n in title]
    if not hits:
        joined = "".join(_cores(player))
        k = _longest_shared(joined, title) if joined else -1
        if k >= 0:
            hits.append(k)
    return min(hits) if hits else math.inf


def claimant_index(title: str, players: list[str]) -> int:
    """Index of the player named first in the title; 0 when no player is named."""
    positions = [_title_position(p, title) for p in players]
    best = min(positions)
    return positions.index(best) if best < math.inf else 0


def dispute_type_from_title(title: str, players: list[str]) -> str:
    """'某物业公司与李某物业服务合同纠纷调解案' -> '物业服务合同纠纷'; '' when unsure."""
    m = _CAUSE_END.search(title)
    if m is None:
        return ""
    head = title[: m.end()]
    end = head.rfind("与") + 1
    for p in players:
        for core in _cores(p):
            k = head.rfind(core)
            if k >= 0:
                end = max(end, k + len(core))
    for pattern in (_ORG, _PERSON):
        for hit in pattern.finditer(head):
            end = max(end, hit.end())
    cut = _COUNT_PREFIX.sub("", head[end:])
    if not 4 <= len(cut) <= 20 or re.search(r"[某0-9]", cut):
        return ""
    return cut


def _raw_types(path: Path) -> dict[str, str]:
    """filename -> dispute type from a raw.jsonl; unreadable lines are skipped."""
    out: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return out
    for line in lines:
        try:
            rec = json.loads(line)
            tokens = rec["content"]["关键词"].split()
            out[rec["filename"]] = tokens[1]
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            continue
    return out


def _hash(name: str, player: str) -> int:
    return zlib.crc32((name + player).encode("utf-8"))


def _weights(h: int, claimant: bool) -> dict[str, int]:
    a, b = h % 11, (h >> 4) % 11
    if claimant:
        amount, liability = 40 + a, 30 + b
    else:
        liability, amount = 35 + a, 35 + b
    return {"liability": liability, "amount": amount, "schedule": 100 - liability - amount}


def _strategy(h: int) -> Strategy:
    slot = (h >> 12) % 4
    if slot == 2:
        return "competing"
    if slot == 3:
        return "collaborating"
    return "compromising"


def _party(index: int, player: str, name: str, claimant: bool) -> Party:
    h = _hash(name, player)
    role = CLAIMANT if claimant else RESPONDENT
    prefs = _CLAIMANT_PREFS if claimant else _RESPONDENT_PREFS
    return Party(
        id=f"p{index + 1}",
        name=player,
        role=role,
        objective=_OBJECTIVE[role],
        fallback=Fallback(description=_FALLBACK, utility=round(0.30 + ((h >> 16) % 16) / 100, 2)),
        preferences={
            t: TopicPreference(ranking=list(rank), unacceptable=list(bad))
            for t, (rank, bad) in prefs.items()
        },
        weights=_weights(h, claimant),
        persona=Persona(strategy=_strategy(h), reactivity=round(0.20 + ((h >> 20) % 31) / 100, 2)),
    )


def _scenario(line_no: int, rec: _Record, dispute_type: str, prefix: str) -> Scenario:
    title = rec.name.removesuffix(".pdf").strip()
    claimant = claimant_index(title, rec.players)
    return Scenario(
        id=f"{prefix}-{line_no:03d}",
        title=title,
        domain="legal",
        language="zh",
        background=rec.basic_back,
        parties=[_party(i, p, rec.name, i == claimant) for i, p in enumerate(rec.players)],
        topics=[t.model_copy(deep=True) for t in TOPICS],
        legal=LegalContext(
            dispute_type=dispute_type,
            brief=rec.basic_back,
            facts=[Fact(source=f.source, content=f.content) for f in rec.fact.facts],
            points_of_contention=[rec.point] if rec.point.strip() else [],
            legal_bases=list(rec.article),
        ),
    )


def _record_problem(data: Any) -> tuple[_Record | None, str]:
    if not isinstance(data, dict):
        return None, f"expected a JSON object, got {type(data).__name__}"
    try:
        rec = _Record.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "record"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        return None, f"{where}: {err['msg']}{more}"
    players = [p.strip() for p in rec.players]
    if not all(players):
        return None, "players: contains an empty name"
    if len(players) < 2:
        return None, f"players: has {len(players)} party, a dispute needs at least 2"
    if rec.player_number != len(players):
        return None, f"player_number is {rec.player_number} but players lists {len(players)}"
    return rec.model_copy(update={"players": players}), ""


def id_prefix(path: Path, many: bool) -> str:
    """Case ids start `am`; with several case files in one import, `am-FILE`, so ids from
    different files never clash."""
    return "am-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", path.stem) if many else "am"


def import_agentmediation(path: Path, prefix: str = "am") -> AgentMediationImport:
    """Read AgentMediation case JSONL; bad lines go to `problems` with their line number.

    Case ids are `PREFIX-LINE` (am-001 for the first line); callers importing several
    files give each its own prefix so that ids stay unique."""
    result = AgentMediationImport()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise AgentMediationError(f"cannot read {path}: {e}") from None
    raw_path = path.parent / "raw.jsonl"
    raw = _raw_types(raw_path) if raw_path.is_file() and raw_path != path else {}
    from_title = 0
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            result.problems.append((line_no, f"not valid JSON: {e.msg} at column {e.colno}"))
            continue
        rec, reason = _record_problem(data)
        if rec is None:
            result.problems.append((line_no, reason))
            continue
        dispute_type = raw.get(rec.name, "")
        if not dispute_type:
            from_title += 1
            dispute_type = dispute_type_from_title(rec.name.removesuffix(".pdf"), rec.players)
        try:
            result.scenarios.append(_scenario(line_no, rec, dispute_type, prefix))
        except ValidationError as e:
            result.problems.append((line_no, f"invalid scenario: {e.errors()[0]['msg']}"))
    if from_title:
        why = "missing from raw.jsonl" if raw else f"no usable raw.jsonl beside {path.name}"
        result.warnings.append(
            f"{from_title} case(s), {why}: dispute types are cut from the titles "
            "(best effort, empty where unsure)"
        )
    if result.scenarios:
        result.warnings.append(
            f"{len(result.scenarios)} case(s): topics, preferences, weights, fallbacks and "
            "personas are the documented settlement ladder, not case data"
        )
    return result
