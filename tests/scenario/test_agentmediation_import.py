"""The AgentMediation importer: every shared case imports, bad lines are reported by number.

Layouts and dispute types: test_agentmediation_layouts.py; claimants:
test_agentmediation_claimants.py; the stored retrieval list: tests/legal/test_stored_retrieval.py.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from disputelab.scenario.importers.agentmediation import (
    CLAIMANT,
    RESPONDENT,
    AgentMediationError,
    case_hash,
    dispute_type_from_title,
    import_agentmediation,
)
from disputelab.scenario.schema import Scenario
from tests.data_location import agentmediation_records
from tests.helpers import AGENTMEDIATION_CASES

DATA = AGENTMEDIATION_CASES.parent
CASES = DATA / "cases.jsonl"
needs_data = pytest.mark.data("agentmediation")

GOOD = {
    "name": "张某与某装修公司装饰装修合同纠纷调解案.pdf",
    "basic_back": "张某委托某装修公司装修住房，完工后发现墙面开裂，双方就返工费用发生争议。",
    "players": ["装修公司法定代表人", "张某"],
    "player_number": 2,
    "point": "装修公司的施工是否构成违约。",
    "article": ["《中华人民共和国民法典》第577条"],
    "fact": {"facts": [{"来源": "现场勘验", "内容": "客厅墙面有三处裂缝。"}]},
    "retrieve_articles": [],
}


@pytest.fixture(scope="module")
def shared() -> list[Scenario]:
    result = import_agentmediation(CASES)
    assert result.problems == []
    return result.scenarios


def _write(tmp_path: Path, lines: list[str], name: str = "cases.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@needs_data
def test_every_real_case_imports_without_a_problem_under_an_id_from_its_title(
    shared: list[Scenario],
) -> None:
    records = agentmediation_records(CASES)
    assert len(shared) == len(records)
    assert [s.id for s in shared] == ["am-" + case_hash(str(r["name"])) for r in records]
    assert len({s.id for s in shared}) == len(records)
    assert all(s.domain == "legal" and s.language == "zh" for s in shared)


@needs_data
def test_dispute_types_come_from_raw_jsonl_and_give_the_papers_76_types(
    shared: list[Scenario],
) -> None:
    types = {s.legal.dispute_type for s in shared if s.legal}
    assert "" not in types
    # The paper counts 76 types over 330 cases; the 308 shared ones keep most of them.
    assert 60 <= len(types) <= 76


@needs_data
def test_a_case_maps_field_by_field(shared: list[Scenario]) -> None:
    [s] = [x for x in shared if x.title == "某物业公司与李某物业服务合同纠纷调解案"]
    assert [(p.id, p.name, p.role) for p in s.parties] == [
        ("p1", "李某", RESPONDENT),
        ("p2", "物业公司法定代表人", CLAIMANT),
    ]
    assert s.legal is not None
    assert s.legal.dispute_type == "物业服务合同纠纷"
    assert s.background == s.legal.brief
    assert s.background.startswith("李某拖欠4年半物业费一直拒不缴纳")
    assert s.legal.legal_bases[0] == "《中华人民共和国民法典》第509条"
    assert s.legal.facts[0].source == "法院初步了解"
    assert len(s.legal.points_of_contention) == 1


@needs_data
def test_the_gold_point_of_contention_never_reaches_the_public_topics(
    shared: list[Scenario],
) -> None:
    for s in shared:
        assert s.legal is not None
        public = " ".join(
            [t.name + t.description for t in s.topics]
            + [o.label for t in s.topics for o in t.options]
        )
        assert s.legal.points_of_contention[0] not in public
    assert {tuple(t.id for t in s.topics) for s in shared} == {("liability", "amount", "schedule")}


@needs_data
def test_every_case_has_a_zone_of_agreement_above_every_fallback(
    shared: list[Scenario],
) -> None:
    packages = [
        dict(zip(["liability", "amount", "schedule"], pkg, strict=True))
        for pkg in itertools.product("ABCDE", "ABCDE", "ABC")
    ]
    for s in shared:
        margin = max(
            min(_utility(s, p.id, pkg) - p.fallback.utility for p in s.parties) for pkg in packages
        )
        assert margin > 0, s.id


def _utility(s: Scenario, party_id: str, package: dict[str, str]) -> float:
    p = s.party(party_id)
    total = 0.0
    for topic, option in package.items():
        ranking = p.preferences[topic].ranking
        if option not in ranking:
            return -1.0
        total += p.weights[topic] / 100 * (len(ranking) - ranking.index(option)) / len(ranking)
    return total


@needs_data
def test_derived_profiles_are_deterministic_and_within_their_documented_ranges(
    shared: list[Scenario],
) -> None:
    again = import_agentmediation(CASES).scenarios
    assert [s.model_dump() for s in again] == [s.model_dump() for s in shared]
    for s in shared:
        roles = [p.role for p in s.parties]
        assert CLAIMANT in roles and RESPONDENT in roles, s.id
        for p in s.parties:
            assert 0.30 <= p.fallback.utility <= 0.45
            assert 0.20 <= p.persona.reactivity <= 0.50
            assert p.persona.strategy in {"compromising", "competing", "collaborating"}
            w = p.weights
            if p.role == CLAIMANT:
                assert 40 <= w["amount"] <= 50 and 30 <= w["liability"] <= 40
            else:
                assert 35 <= w["amount"] <= 45 and 35 <= w["liability"] <= 45
            assert sum(w.values()) == 100


def test_bad_lines_are_reported_with_their_line_numbers_and_the_rest_import(
    tmp_path: Path,
) -> None:
    missing_players = {k: v for k, v in GOOD.items() if k != "players"}
    path = _write(
        tmp_path, [json.dumps(GOOD, ensure_ascii=False), "{not json", json.dumps(missing_players)]
    )
    result = import_agentmediation(path)
    assert [s.id for s in result.scenarios] == ["am-" + case_hash(str(GOOD["name"]))]
    assert [n for n, _ in result.problems] == [2, 3]
    assert "not valid JSON" in result.problems[0][1]
    assert "players" in result.problems[1][1]
    assert all("\n" not in reason for _, reason in result.problems)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"players": []}, "at least 2"),
        ({"players": ["张某"], "player_number": 1}, "at least 2"),
        ({"players": ["张某", " "]}, "empty name"),
        ({"players": "张某,李某"}, "players"),
        ({"article": "《民法典》第577条"}, "article"),
        ({"player_number": "2"}, "player_number"),
        ({"player_number": 3}, "player_number is 3"),
        ({"fact": {"facts": [{"来源": "勘验"}]}}, "内容"),
        ({"basic_back": ""}, "basic_back"),
    ],
)
def test_each_malformed_record_is_one_problem_naming_the_field(
    tmp_path: Path, change: dict[str, object], reason: str
) -> None:
    path = _write(tmp_path, [json.dumps({**GOOD, **change}, ensure_ascii=False)])
    result = import_agentmediation(path)
    assert result.scenarios == []
    assert len(result.problems) == 1
    line, message = result.problems[0]
    assert line == 1
    assert reason in message


def test_without_raw_records_the_type_is_cut_from_the_title_and_each_case_is_named(
    tmp_path: Path,
) -> None:
    other = {**GOOD, "name": "王某与陈某相邻关系纠纷调解案.pdf", "players": ["王某", "陈某"]}
    path = _write(
        tmp_path, [json.dumps(GOOD, ensure_ascii=False), json.dumps(other, ensure_ascii=False)]
    )
    result = import_agentmediation(path)
    assert [s.legal.dispute_type for s in result.scenarios if s.legal] == [
        "装饰装修合同纠纷",
        "相邻关系纠纷",
    ]
    assert any("no raw records beside cases.jsonl" in w for w in result.warnings)
    ids = ", ".join(s.id for s in result.scenarios)
    assert any(ids in w and "dispute type" in w for w in result.warnings)
    assert all(
        any("dispute type cut from the title" in a for a in s.assumptions) for s in result.scenarios
    )


def test_a_raw_jsonl_beside_the_input_supplies_the_type(tmp_path: Path) -> None:
    raw = {"filename": GOOD["name"], "content": {"关键词": "民事 建设工程合同纠纷 墙面开裂"}}
    _write(tmp_path, [json.dumps(raw, ensure_ascii=False)], "raw.jsonl")
    path = _write(tmp_path, [json.dumps(GOOD, ensure_ascii=False)])
    result = import_agentmediation(path)
    assert result.scenarios[0].legal is not None
    assert result.scenarios[0].legal.dispute_type == "建设工程合同纠纷"
    assert not any("raw.jsonl" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("title", "players", "expected"),
    [
        ("某物业公司与李某物业服务合同纠纷调解案", ["李某", "某物业公司"], "物业服务合同纠纷"),
        ("某保理公司与某实业发展公司等保理合同纠纷调解案", ["甲", "乙"], "保理合同纠纷"),
        ("58名员工与某服饰公司劳动争议调解案", ["员工代表", "服饰公司负责人"], "劳动争议"),
        ("王某与某公司、某供应商专利权侵权纠纷调解案", ["王某", "某公司法定代表人"], ""),
        ("某公司与王某和解案", ["王某", "某公司法定代表人"], ""),
    ],
)
def test_title_types_are_best_effort_and_empty_when_unsure(
    title: str, players: list[str], expected: str
) -> None:
    assert dispute_type_from_title(title, players) == expected


def test_an_unreadable_file_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(AgentMediationError, match="cannot read") as info:
        import_agentmediation(tmp_path / "absent.jsonl")
    assert "\n" not in str(info.value)
