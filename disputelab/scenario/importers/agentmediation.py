"""Import AgentMediation case records (AgentMediation paper) into legal Scenarios.

Each line of a case file is one preprocessed case: `name`, `basic_back`, `players`,
`player_number`, `point`, `article`, `fact` and, optionally, `retrieve_articles`. The
case text maps onto the scenario directly: the brief becomes the background, and the
facts, the point of contention, the cited articles and the stored retrieval list go into
`legal`. Everything a rule agent needs beyond that (topics, preferences, weights,
fallbacks, personas) is not in the data, so it is derived as follows. These are
assumptions, and this docstring is where they are written down.

Layouts.
    A case file is read with the raw records beside it: `cases.jsonl` with `raw.jsonl`
    (the fetched dataset), or `case_back.json` with `data_resource.json` (the `data/`
    folder of a clone of the AgentMediation repository; both are JSON lines despite the
    suffix). `case_files` finds the case files in a folder or a clone's root and never
    takes a raw-record file for a case file.

Case ids.
    A case's id comes from the case, never from where it sits in the file: `am-` and
    the first 8 hex digits of the SHA-256 of its title (`name` without `.pdf`, NFKC
    normalised, whitespace removed), the closest thing to a source id the records
    carry. So the 308-case subset and the full repository give a shared case the same
    id. Cases of one file that share a title hash the title and the brief instead (all
    of them, so the id still does not depend on their order); a line that repeats one
    already read is reported, not imported twice. Ids used to be line numbers
    (`am-001`): `positional` maps each imported case's old id to its id now, which the
    import record keeps so that old ids still resolve.

Dispute type.
    The paper's DT: the 2nd space-separated token of `content.关键词` in the raw record
    whose `filename` is the case `name` (or, failing that, whose 基本案情 is the brief).
    A case no raw record matches gets a type cut from its title (the text up to the first
    纠纷 or 争议, after the last party mentioned; empty when the cut still looks like it
    holds a party name), a warning naming it, and a line in the scenario's assumptions.

Stored retrieval.
    `retrieve_articles`, the legal bases the paper's retriever found for the case (its
    "w/ EK" setting draws the top k from it), is kept as `legal.stored_retrieval`;
    `expertise:stored-topK` hands the mediator its first k entries. A record without the
    key has no list (None); an empty list stays empty.

Claimant.
    The claimants (申请方) are the parties who bring the claim; every other party is a
    respondent (被申请方). Two readings decide (see `decide_claimants`):
    - the title, which names the applicant side first ("甲、乙与丙…纠纷"): the parties
      named before the first 与 (else 和);
    - the brief and facts: who 起诉/诉至法院/申请仲裁/申请调解 (a formal claim, weight 2) or
      要求/请求/主张/索要/投诉 (a demand, weight 1), and who is sued, asked or refuses
      (拒不/拖欠/…, against). A party's score is its claims less what is held against it.
    Parties are found by their names, by their core name (罗某 in 罗某家属代表, 物业公司 in
    物业公司法定代表人) and, for collectives, by the nouns of their group (员工代表 also
    answers to 劳动者, 工人, "刘某等17人"). The title decides when it names one side and
    the brief agrees or says nothing; the brief decides when it shows a formal claim, or
    when the title is ambiguous (a tie, no 与, no party named first). A decision that stays
    uncertain (only a demand against the title, several parties filing claims, or nothing
    to go on) is warned about, naming the case, and recorded in the assumptions.

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

import hashlib
import json
import re
import unicodedata
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from disputelab.errors import DisputelabError
from disputelab.scenario.importers.amounts import recorded_amount
from disputelab.scenario.importers.claimants import ClaimantDecision, decide_claimants, name_cores
from disputelab.scenario.inputs import (
    MAX_DATASET_BYTES,
    InputLimitError,
    UserFileError,
    load_json,
    read_user_file,
)
from disputelab.scenario.io import describe_validation_error
from disputelab.scenario.schema import (
    Fact,
    Fallback,
    LegalContext,
    NumericTerm,
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


class AgentMediationError(DisputelabError, ValueError):
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
    retrieve_articles: list[StrictStr] | None = None


@dataclass
class AgentMediationImport:
    scenarios: list[Scenario] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    # The line-number id each case had before ids came from the case (am-001) -> its id.
    positional: dict[str, str] = field(default_factory=dict)


ID_DIGITS = 8


def title_key(name: str) -> str:
    """A case title as ids hash it: no `.pdf`, NFKC normalised, no whitespace, so that a
    full-width space or a stray newline does not change the case's id."""
    normal = unicodedata.normalize("NFKC", _title_key(name))
    return re.sub(r"\s+", "", normal)


def case_hash(name: str, brief: str | None = None) -> str:
    """The short stable hash of a case: of its title, or of title and brief when the
    title alone is shared by several cases of a file."""
    text = title_key(name) if brief is None else title_key(name) + "\n" + brief.strip()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:ID_DIGITS]


def shared_titles(lines: list[str]) -> set[str]:
    """The title keys more than one readable case of a file carries (a line that is not a
    case does not change the ids of those that are)."""
    seen: dict[str, int] = {}
    for line in lines:
        try:
            data = load_json(line) if line.strip() else None
        except (ValueError, InputLimitError):
            continue
        rec = _record_problem(data)[0] if data is not None else None
        if rec is not None:
            key = title_key(rec.name)
            seen[key] = seen.get(key, 0) + 1
    return {k for k, n in seen.items() if n > 1}


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


def dispute_type_from_title(title: str, players: list[str]) -> str:
    """'某物业公司与李某物业服务合同纠纷调解案' -> '物业服务合同纠纷'; '' when unsure."""
    m = _CAUSE_END.search(title)
    if m is None:
        return ""
    head = title[: m.end()]
    end = head.rfind("与") + 1
    for p in players:
        for core in name_cores(p):
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


RAW_BESIDE = {"cases.jsonl": "raw.jsonl", "case_back.json": "data_resource.json"}
CASE_BACK = "case_back.json"


def case_files(path: Path) -> list[Path]:
    """The case files at `path`: the file itself; in a folder, its `*.jsonl` case files
    and a `case_back.json`; in a clone of the repository, `data/case_back.json`. Raw-record
    files (raw.jsonl, data_resource.json) are not case files."""
    if not path.is_dir():
        return [path]
    raw = set(RAW_BESIDE.values())
    found = sorted(p for p in path.glob("*.jsonl") if p.name not in raw)
    for back in (path / CASE_BACK, path / "data" / CASE_BACK):
        if back.is_file() and not (found and back.parent != path):
            found.append(back)
            break
    return found


def raw_file(path: Path) -> Path | None:
    """The raw records beside case file `path`: its layout's partner, else either name."""
    partner = RAW_BESIDE.get(path.name)
    names = ([partner] if partner else []) + [n for n in RAW_BESIDE.values() if n != partner]
    for name in names:
        candidate = path.parent / name
        if candidate.is_file() and candidate.resolve() != path.resolve():
            return candidate
    return None


@dataclass
class _RawTypes:
    """Dispute types from raw records, by case title and by brief; unreadable lines."""

    by_name: dict[str, str] = field(default_factory=dict)
    by_brief: dict[str, str] = field(default_factory=dict)
    bad_lines: list[int] = field(default_factory=list)
    # The recorded result (content.处理结果) by case title, for the settled amount.
    results: dict[str, str] = field(default_factory=dict)

    def find(self, rec: _Record) -> str | None:
        return self.by_name.get(_title_key(rec.name)) or self.by_brief.get(rec.basic_back.strip())

    def result(self, rec: _Record) -> str | None:
        return self.results.get(_title_key(rec.name))


def _title_key(name: str) -> str:
    return name.strip().removesuffix(".pdf").strip()


def _raw_types(path: Path) -> _RawTypes:
    """The paper's DT per raw record: the 2nd token of content.关键词."""
    # Callers report UserFileError.
    lines = read_user_file(path, MAX_DATASET_BYTES, "AgentMediation raw records").splitlines()
    out = _RawTypes()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = load_json(line)
            content = rec["content"]
            dispute_type = content["关键词"].split()[1]
            name = _title_key(rec["filename"])
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            out.bad_lines.append(n)
            continue
        out.by_name.setdefault(name, dispute_type)
        result = content.get("处理结果")
        if isinstance(result, str):
            out.results.setdefault(name, result)
        brief = content.get("基本案情")
        if isinstance(brief, str) and brief.strip():
            out.by_brief.setdefault(brief.strip(), dispute_type)
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


def _scenario(
    sid: str, rec: _Record, dispute_type: str, assumed: list[str]
) -> tuple[Scenario, ClaimantDecision]:
    title = _title_key(rec.name)
    facts = [f.content for f in rec.fact.facts]
    decision = decide_claimants(title, rec.players, rec.basic_back, facts)
    if decision.uncertain:
        names = "、".join(rec.players[i] for i in decision.claimants)
        assumed = [*assumed, f"claimant {names}: uncertain, {decision.uncertain}"]
    scenario = Scenario(
        id=sid,
        title=title,
        domain="legal",
        language="zh",
        background=rec.basic_back,
        parties=[
            _party(i, p, rec.name, i in decision.claimants) for i, p in enumerate(rec.players)
        ],
        topics=[t.model_copy(deep=True) for t in TOPICS],
        legal=LegalContext(
            dispute_type=dispute_type,
            brief=rec.basic_back,
            facts=[Fact(source=f.source, content=f.content) for f in rec.fact.facts],
            points_of_contention=[rec.point] if rec.point.strip() else [],
            legal_bases=list(rec.article),
            stored_retrieval=None if rec.retrieve_articles is None else list(rec.retrieve_articles),
        ),
        assumptions=assumed,
    )
    return scenario, decision


# The most parties a case may seat. The dataset's largest case has 6; every party speaks
# in every round of the staged protocol, so a case of hundreds could never be played.
MAX_PLAYERS = 8


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
    if len(players) > MAX_PLAYERS:
        return None, f"players: has {len(players):,} parties; a case seats at most {MAX_PLAYERS}"
    if rec.player_number != len(players):
        return None, f"player_number is {rec.player_number} but players lists {len(players)}"
    return rec.model_copy(update={"players": players}), ""


def id_prefix(path: Path, many: bool) -> str:
    """Case ids start `am`; with several case files in one import, `am-FILE`, so ids from
    different files never clash."""
    # Cut: file names run to 255 characters, scenario ids to MAX_ID_CHARS.
    return "am-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", path.stem)[:100] if many else "am"


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:12]) + (f" and {len(ids) - 12} more" if len(ids) > 12 else "")


@dataclass
class SettledAmounts:
    """Amounts read from the recorded results: a readable one becomes the case's amount
    term, its `reference` (the Acc@tau target; no side's target or walk-away is in the
    data); an unreadable one leaves the case without an amount term, and is reported."""

    read: list[str] = field(default_factory=list)
    unread: dict[str, list[str]] = field(default_factory=dict)  # reason -> case ids

    def add(self, scenario: Scenario, recorded: str | None) -> None:
        if recorded is None:
            self.unread.setdefault("no recorded result (处理结果) matches the case", []).append(
                scenario.id
            )
            return
        reading = recorded_amount(recorded)
        if reading.amount is None or reading.amount <= 0:
            # Grouped by the kind of reason; the amounts a list names are in the reason.
            self.unread.setdefault(reading.reason.split(" (")[0], []).append(scenario.id)
            return
        scenario.terms = [
            NumericTerm(id="amount", name="调解金额", unit="元", reference=reading.amount)
        ]
        self.read.append(scenario.id)

    def warnings(self) -> list[str]:
        total = len(self.read) + sum(len(v) for v in self.unread.values())
        if not total:
            return []
        out = [
            f"{len(self.read)} of {total} case(s) state a settled amount in their recorded "
            "result (处理结果), kept as the amount term's reference; the others have no "
            "amount term"
        ]
        for reason, ids in sorted(self.unread.items(), key=lambda kv: -len(kv[1])):
            out.append(f"no amount for {len(ids)} case(s): {reason}: {_ids(ids)}")
        return out


def import_agentmediation(path: Path, prefix: str = "am") -> AgentMediationImport:
    """Read an AgentMediation case file (JSON lines); bad lines go to `problems` with their
    line number, and what had to be assumed goes to `warnings`, naming the case.

    Case ids are `PREFIX-HASH` (see "Case ids" above); callers importing several files
    give each its own prefix so that ids stay unique."""
    result = AgentMediationImport()
    lines = _case_lines(path)
    raw, raw_path = _raw_beside(path, result.warnings)
    if not any(line.strip() for line in lines):
        raise AgentMediationError("holds no case records (the file is empty)")
    importing = _Importing(prefix, raw, raw_path, result, shared_titles(lines))
    for line_no, line in enumerate(lines, start=1):
        if line.strip():
            importing.add(line_no, line)
    return importing.finish()


def _case_lines(path: Path) -> list[str]:
    """The lines of case file `path`; a file that cannot be read fails the import."""
    try:
        text = read_user_file(path, MAX_DATASET_BYTES, "an AgentMediation case file (.jsonl)")
    except UserFileError as e:
        raise AgentMediationError(f"cannot read {path}: {e}") from None
    return text.splitlines()


def _raw_beside(path: Path, warnings: list[str]) -> tuple[_RawTypes | None, Path | None]:
    """The raw records beside case file `path` and the file they came from. Raw records
    that are missing, unreadable or in part unusable are warned about, not fatal: the
    cases then take their dispute type from the title."""
    raw, raw_path = None, raw_file(path)
    if raw_path is None:
        partner = RAW_BESIDE.get(path.name)
        looked = " or ".join(dict.fromkeys([*([partner] if partner else []), *RAW_BESIDE.values()]))
        warnings.append(f"no raw records beside {path.name} (looked for {looked})")
        return raw, raw_path
    try:
        raw = _raw_types(raw_path)
    except UserFileError as e:
        warnings.append(f"cannot read the raw records {raw_path}: {e}")
    if raw is not None and raw.bad_lines:
        warnings.append(
            f"{raw_path.name}: {len(raw.bad_lines)} line(s) give no dispute type "
            f"(content.关键词 with a 2nd token): lines {_ids([str(n) for n in raw.bad_lines])}"
        )
    return raw, raw_path


@dataclass
class _Importing:
    """One case file being imported: where its dispute types come from, what it has made
    so far, and the cases that the warnings summing up the file will name."""

    prefix: str
    raw: _RawTypes | None
    raw_path: Path | None
    result: AgentMediationImport
    shared: set[str] = field(default_factory=set)  # title keys several lines carry
    lines_by_id: dict[str, int] = field(default_factory=dict)
    untyped: list[str] = field(default_factory=list)  # no raw record gave the type
    from_brief: list[str] = field(default_factory=list)  # the brief chose the claimant
    amounts: SettledAmounts = field(default_factory=SettledAmounts)

    def add(self, line_no: int, line: str) -> None:
        """Import one non-blank line: a scenario, or a problem naming the line."""
        rec = self._record(line_no, line)
        sid = None if rec is None else self._case_id(line_no, rec)
        if rec is None or sid is None:
            return
        title = _title_key(rec.name)
        assumed: list[str] = []
        dispute_type = self._dispute_type(sid, title, rec, assumed)
        try:
            scenario, decision = _scenario(sid, rec, dispute_type, assumed)
        except ValidationError as e:
            self.result.problems.append(
                (line_no, f"invalid scenario: {e.title}: {describe_validation_error(e)[0]}")
            )
            return
        self.amounts.add(scenario, self.raw.result(rec) if self.raw is not None else None)
        self.result.scenarios.append(scenario)
        self.result.positional[f"{self.prefix}-{line_no:03d}"] = sid
        if decision.basis == "brief":
            self.from_brief.append(sid)
        if decision.uncertain:
            names = "、".join(rec.players[i] for i in decision.claimants)
            self.result.warnings.append(
                f"{sid} {title}: claimant uncertain ({decision.uncertain}); took {names}"
            )

    def _case_id(self, line_no: int, rec: _Record) -> str | None:
        """The case's stable id, or None (a problem naming the earlier line) for a line
        that repeats a case already read."""
        shared = title_key(rec.name) in self.shared
        sid = f"{self.prefix}-{case_hash(rec.name, rec.basic_back if shared else None)}"
        if sid in self.lines_by_id:
            first = self.lines_by_id[sid]
            self.result.problems.append(
                (line_no, f"the same case as line {first} (title and brief): id {sid}; skipped")
            )
            return None
        self.lines_by_id[sid] = line_no
        return sid

    def _record(self, line_no: int, line: str) -> _Record | None:
        """The case record on a line, or None with the reason in `problems`."""
        try:
            data = load_json(line)
        except json.JSONDecodeError as e:
            self.result.problems.append((line_no, f"not valid JSON: {e.msg} at column {e.colno}"))
            return None
        except InputLimitError as e:
            self.result.problems.append((line_no, str(e)))
            return None
        rec, reason = _record_problem(data)
        if rec is None:
            self.result.problems.append((line_no, reason))
        return rec

    def _dispute_type(self, sid: str, title: str, rec: _Record, assumed: list[str]) -> str:
        """The case's dispute type from its raw record; failing that, cut from its title
        (recorded in `assumed`, and warned about here when there were raw records to
        match; without any, `finish` names all such cases in one warning)."""
        dispute_type = self.raw.find(rec) if self.raw is not None else None
        if dispute_type is not None:
            return dispute_type
        dispute_type = dispute_type_from_title(title, rec.players)
        cut = f"cut from the title: {dispute_type}" if dispute_type else "left empty"
        assumed.append(f"dispute type {cut} (no raw record matches)")
        self.untyped.append(sid)
        if self.raw is not None:
            self.result.warnings.append(
                f"{sid} {title}: no record in {self.raw_path.name if self.raw_path else ''} "
                f"matches; dispute type {cut}"
            )
        return dispute_type

    def finish(self) -> AgentMediationImport:
        """The result, with the warnings that sum up the whole file last."""
        result = self.result
        if self.untyped and self.raw is None:
            result.warnings.append(
                f"{len(self.untyped)} case(s) take their dispute type from the title, best "
                f"effort (recorded in each scenario's assumptions): {_ids(self.untyped)}"
            )
        if self.from_brief:
            result.warnings.append(
                f"{len(self.from_brief)} case(s) take the claimant from the brief, not from the "
                f"party the title names first: {_ids(self.from_brief)}"
            )
        result.warnings += self.amounts.warnings()
        if result.scenarios:
            result.warnings.append(
                f"{len(result.scenarios)} case(s): topics, preferences, weights, fallbacks and "
                "personas are the documented settlement ladder, not case data"
            )
        return result
