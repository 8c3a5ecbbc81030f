"""The claimants are the parties who bring the claim: the title names them first unless it
is ambiguous or the brief and facts say otherwise, and an uncertain decision is warned
about, naming the case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from disputelab.scenario.importers.agentmediation import (
    CLAIMANT,
    RESPONDENT,
    import_agentmediation,
)
from disputelab.scenario.importers.claimants import decide_claimants
from tests.helpers import AGENTMEDIATION_CASES

DATA = AGENTMEDIATION_CASES.parent
CASES = DATA / "cases.jsonl"
needs_data = pytest.mark.data("agentmediation")


def _claimants(
    title: str, players: list[str], brief: str, facts: tuple[str, ...] = ()
) -> list[str]:
    return [players[i] for i in decide_claimants(title, players, brief, facts).claimants]


@pytest.mark.parametrize(
    ("title", "players", "brief", "claimants"),
    [
        # The title's convention holds when the brief agrees or is silent.
        (
            "某物业公司与李某物业服务合同纠纷调解案",
            ["李某", "物业公司法定代表人"],
            "李某拖欠物业费拒不缴纳，故物业公司向法院提起诉讼。",
            ["物业公司法定代表人"],
        ),
        (
            "张某与程某土地承包经营权纠纷调解案",
            ["程某", "张某"],
            "张某与程某土地相邻，双方对边界看法不一。",
            ["张某"],
        ),
        # A collective answers to its group's other nouns, never to its employer's name.
        (
            "郭某等劳动者与某科技公司劳动合同纠纷案",
            ["科技公司法定代表人", "科技公司员工代表"],
            "郭某等人向法院起诉，要求某科技公司支付工资。",
            ["科技公司员工代表"],
        ),
    ],
)
def test_the_title_names_the_claimant_first(
    title: str, players: list[str], brief: str, claimants: list[str]
) -> None:
    assert _claimants(title, players, brief) == claimants


def test_names_that_share_a_stem_do_not_tie_the_brief_tells_them_apart() -> None:
    # 苏某 in the title fits 苏某甲 and 苏某乙 alike; the old rule took the first listed.
    players = ["苏某甲", "苏某乙", "李某"]
    brief = "苏某乙与李某系邻居。苏某乙将李某诉至法院，要求李某拆除围墙。"
    assert _claimants("苏某与李某相邻关系纠纷调解案", players, brief) == ["苏某乙"]


def test_a_name_never_matches_inside_a_longer_one() -> None:
    players = ["苏某乙", "苏某甲"]
    brief = "苏某甲要求苏某乙拆除围墙，苏某乙拒不拆除，苏某甲遂诉至法院。"
    assert _claimants("苏某甲与苏某乙相邻关系纠纷调解案", players, brief) == ["苏某甲"]


def test_a_title_that_names_the_tortfeasor_first_yields_to_the_brief() -> None:
    brief = "王某驾车撞伤郭某。王某支付部分医疗费后态度消极，故郭某向法院提起诉讼，要求王某赔偿。"
    title = "王某与郭某机动车交通事故责任纠纷调解案"
    assert _claimants(title, ["王某", "郭某"], brief) == ["郭某"]
    decision = decide_claimants(title, ["王某", "郭某"], brief)
    assert decision.basis == "brief" and decision.uncertain == ""


def test_a_tie_for_first_place_in_the_title_is_broken_by_the_brief() -> None:
    # Both players fit 某保洁公司: the company by name, its workers' representative by
    # the title's 刘某等17人, which the old rule did not read.
    players = ["保洁公司法定代表人", "保洁公司员工代表"]
    brief = "刘某等17人多次向保洁公司索要劳务报酬未果，遂到本地区综治中心寻求帮助。"
    title = "刘某等17人与某保洁公司劳务合同纠纷调解案"
    assert _claimants(title, players, brief) == ["保洁公司员工代表"]


def test_parties_named_together_first_are_all_claimants() -> None:
    players = ["何某", "向某", "曾某"]
    brief = "双方多次协商未果，向某与曾某遂诉至法院，要求何某赔偿损失。"
    title = "向某、曾某与何某机动车交通事故责任纠纷调解案"
    assert _claimants(title, players, brief) == ["向某", "曾某"]


def test_a_case_brought_by_someone_the_title_does_not_name_first() -> None:
    assert _claimants(
        "龚某消费者权益保护公益诉讼调解案",
        ["龚某", "某检察院"],
        "龚某在网络平台销售假冒商品。同年4月，某检察院提起诉讼，要求龚某赔偿公益损害赔偿款。",
    ) == ["某检察院"]


def test_a_passive_claim_verb_is_not_the_subjects_claim() -> None:
    brief = "14名农民工被拖欠劳务款，多次讨要无果后，集体反映至综治中心。"
    players = ["建设工程公司法定代表人", "农民工代表"]
    assert _claimants("余某等14名农民工被拖欠劳务报酬纠纷调解案", players, brief) == ["农民工代表"]


def test_only_a_demand_against_the_titles_first_party_is_taken_and_called_uncertain() -> None:
    players = ["杨某", "受损业主代表", "物业公司代表"]
    brief = "电动自行车车主杨某拒绝出面解决赔偿问题，受损业主要求物业公司赔付。"
    decision = decide_claimants("杨某与某小区部分业主财产损害赔偿责任纠纷调解案", players, brief)
    assert [players[i] for i in decision.claimants] == ["受损业主代表"]
    assert "the title names 杨某 first" in decision.uncertain


@pytest.mark.parametrize(
    ("title", "players", "brief", "why"),
    [
        (
            "业主与某社区建筑物区分所有权纠纷调解案",
            ["社区老年业主代表", "其他居民代表"],
            "某社区推进加装电梯，居民纠纷越来越多。",
            "together first",
        ),
        (
            "两船碰撞引发的船舶碰撞关联纠纷一揽子调解案",
            ["海船方", "内河船方"],
            "两船在航道相撞。",
            "no sides",
        ),
        (
            "杨某与冯某扶养纠纷调解案",
            ["杨某", "冯某", "杨某哥哥"],
            "杨某向法院起诉，请求冯某给付扶养费。杨某哥哥另案将杨某、冯某诉至法院，要求偿还债务。",
            "杨某哥哥 also files a claim",
        ),
    ],
)
def test_a_decision_nothing_settles_is_uncertain(
    title: str, players: list[str], brief: str, why: str
) -> None:
    decision = decide_claimants(title, players, brief)
    assert why in decision.uncertain
    assert len(decision.claimants) < len(players)


def test_the_import_warns_about_an_uncertain_claimant_naming_the_case(tmp_path: Path) -> None:
    record = {
        "name": "业主与某社区建筑物区分所有权纠纷调解案.pdf",
        "basic_back": "某社区推进加装电梯，居民纠纷越来越多。",
        "players": ["社区老年业主代表", "其他居民代表"],
        "player_number": 2,
        "point": "争议焦点为加装电梯是否侵害低层业主权益。",
        "article": ["《中华人民共和国民法典》第278条"],
        "fact": {"facts": [{"来源": "勘验", "内容": "楼栋加装电梯。"}]},
    }
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    result = import_agentmediation(path)
    [warning] = [w for w in result.warnings if "claimant uncertain" in w]
    [scenario] = result.scenarios
    assert warning.startswith(
        f"{scenario.id} 业主与某社区建筑物区分所有权纠纷调解案: claimant uncertain"
    )
    assert warning.endswith("took 社区老年业主代表")
    assert [p.role for p in scenario.parties] == [CLAIMANT, RESPONDENT]
    assert any(a.startswith("claimant 社区老年业主代表: uncertain") for a in scenario.assumptions)


@needs_data
def test_on_the_shared_cases_the_brief_corrects_the_titles_that_mislead() -> None:
    result = import_agentmediation(CASES)
    by_title = {s.title: s for s in result.scenarios}
    # Cases are named by title, which every copy of the data shares (ids used to be line
    # numbers, which differ between the 308-case subset and the full repository).
    expected = {
        "王某与郭某机动车交通事故责任纠纷调解案": ["郭某"],  # 郭某向法院提起诉讼
        "某房地产开发商与24名购房者房屋买卖合同纠纷调解案": ["购房者代表"],
        "龚某消费者权益保护公益诉讼调解案": ["某检察院"],  # 某检察院提起诉讼
        "商某与某物业公司物业服务合同纠纷调解案": ["小区物业公司法定代表人"],
        "向某、曾某与何某机动车交通事故责任纠纷调解案": ["向某", "曾某"],
        "刘某等17人与某保洁公司劳务合同纠纷调解案": ["保洁公司员工代表"],
        "某物业公司与李某物业服务合同纠纷调解案": ["物业公司法定代表人"],
    }
    present = {t: want for t, want in expected.items() if t in by_title}
    assert present, "none of the cases these expectations name is in the data"
    for title, want in present.items():
        assert [p.name for p in by_title[title].parties if p.role == CLAIMANT] == want, title
    uncertain = {w.split()[0] for w in result.warnings if "claimant uncertain" in w}
    for sid in uncertain:  # every warning names a case, which records the doubt
        [case] = [s for s in result.scenarios if s.id == sid]
        assert any(a.startswith("claimant ") and "uncertain" in a for a in case.assumptions)
    doubtful = (
        "业主与某社区建筑物区分所有权纠纷调解案",
        "两船碰撞引发的船舶碰撞关联纠纷一揽子调解案",
        "杨某与某小区部分业主财产损害赔偿责任纠纷调解案",
    )
    assert {by_title[t].id for t in doubtful if t in by_title} <= uncertain
