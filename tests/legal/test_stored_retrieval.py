"""The stored retriever: an AgentMediation case keeps its `retrieve_articles`, and
`expertise:stored-topK` hands the mediator the top K of that list, beside BM25's
`expertise:ek-topK`, in `disputelab run`, in experiment specs and in `conditions list`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.legal.expertise import ExpertiseError, bases_for, retrieve_for, retrieved_bases
from disputelab.scenario.conditions import ConditionError, apply_condition
from disputelab.scenario.importers.agentmediation import import_agentmediation
from disputelab.scenario.library import builtin_scenarios
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import Store
from tests.data_location import agentmediation_records
from tests.helpers import AGENTMEDIATION_CASES

CASES = AGENTMEDIATION_CASES
STORED = [
    "《中华人民共和国民法典》第五百七十七条",
    "《中华人民共和国民法典》第577条第一款",  # the same article again: it counts toward K
    "《中华人民共和国民法典》第五百零九条",
    "《中华人民共和国合同法》第一百零七条",
]


def _record(name: str, stored: list[str] | None) -> dict[str, object]:
    record: dict[str, object] = {
        "name": f"{name}与某装修公司装饰装修合同纠纷调解案.pdf",
        "basic_back": f"{name}委托某装修公司装修住房，完工后发现墙面开裂，{name}诉至法院要求返工。",
        "players": [name, "装修公司法定代表人"],
        "player_number": 2,
        "point": "装修公司的施工是否构成违约。",
        "article": ["《中华人民共和国民法典》第577条", "《中华人民共和国民法典》第509条"],
        "fact": {"facts": [{"来源": "现场勘验", "内容": "客厅墙面有三处裂缝。"}]},
    }
    if stored is not None:
        record["retrieve_articles"] = stored
    return record


def _import(tmp_path: Path, *records: dict[str, object]) -> list[Scenario]:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return import_agentmediation(path).scenarios


def test_the_import_keeps_the_stored_list_and_tells_absent_from_empty(tmp_path: Path) -> None:
    kept, empty, absent = _import(
        tmp_path, _record("张某", STORED), _record("李某", []), _record("王某", None)
    )
    assert kept.legal is not None and kept.legal.stored_retrieval == STORED
    assert empty.legal is not None and empty.legal.stored_retrieval == []
    assert absent.legal is not None and absent.legal.stored_retrieval is None


def test_stored_top_k_is_the_first_k_entries_in_canonical_form(tmp_path: Path) -> None:
    [case] = _import(tmp_path, _record("张某", STORED))
    top3 = apply_condition(case, "expertise:stored-top3")
    # The repeat of 第577条 takes a place among the first three, as in the paper's code.
    assert retrieve_for(None, top3) == ("《民法典》第577条", "《民法典》第509条")
    top5 = apply_condition(case, "expertise:stored-top5")
    assert retrieve_for(None, top5) == (
        "《民法典》第577条",
        "《民法典》第509条",
        "《合同法》第107条",
    )
    assert retrieve_for(None, apply_condition(case, "expertise:none")) == ()


def test_an_empty_stored_list_hands_the_mediator_nothing(tmp_path: Path) -> None:
    [case] = _import(tmp_path, _record("李某", []))
    assert retrieve_for(None, apply_condition(case, "expertise:stored-top10")) == ()


def test_ek_top_k_unsets_the_stored_list_so_bm25_ranks(tmp_path: Path) -> None:
    cases = _import(tmp_path, _record("张某", STORED), _record("李某", ["《民法典》第1165条"]))
    ek = apply_condition(cases[0], "expertise:ek-top3")
    assert ek.legal is not None and ek.legal.stored_retrieval is None
    # Leave-one-out BM25 over the cases' own bases: 李某's case cites 第577条 and 第509条.
    assert set(bases_for(None, cases, ek)) == {"《民法典》第577条", "《民法典》第509条"}
    with pytest.raises(ExpertiseError, match="statute index"):
        retrieve_for(None, ek)


def test_a_legal_case_without_a_stored_list_is_a_one_line_condition_error(
    tmp_path: Path,
) -> None:
    [absent] = _import(tmp_path, _record("王某", None))
    with pytest.raises(
        ConditionError, match=f"{re.escape(absent.id)} has no stored retrieval"
    ) as info:
        apply_condition(absent, "expertise:stored-top3")
    assert "\n" not in str(info.value) and "expertise:ek-top3" in str(info.value)


@pytest.mark.parametrize(
    ("condition", "code", "message"),
    [
        ("expertise:stored-top3", 0, "x 3 replicates = 6 episodes"),
        ("expertise:stored-4", 2, "use one of none, ek-top3, ek-top5, ek-top10, stored-top3"),
    ],
)
def test_a_spec_accepts_stored_top_k_and_rejects_an_unknown_level_in_one_line(
    tmp_path: Path, condition: str, code: int, message: str
) -> None:
    _import(tmp_path, _record("张某", STORED), _record("李某", []))
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: t7\nprotocol: staged\nscenarios: ['agentmediation:cases.jsonl']\n"
        f"conditions: [{condition}]\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app, ["--store", str(tmp_path / "runs"), "experiment", str(spec), "--dry-run"]
    )
    assert result.exit_code == code, result.output
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_a_scenario_with_no_legal_context_is_handed_nothing_by_the_stored_retriever() -> None:
    # The spec's name check runs conditions on a built-in scenario of this kind.
    tenancy = apply_condition(builtin_scenarios()["tenancy"], "expertise:stored-top3")
    assert retrieve_for(None, tenancy) == ()


def test_conditions_list_shows_both_retrievers() -> None:
    result = CliRunner().invoke(app, ["conditions", "list"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "expertise:none|ek-topK|stored-topK" in text
    assert "top K of the case's stored retrieval list" in text


def test_experiment_cells_get_stored_bases_and_bm25_bases_side_by_side(tmp_path: Path) -> None:
    cases = _import(tmp_path, _record("张某", STORED), _record("李某", ["《民法典》第1165条"]))
    scenarios = {s.id: s for s in cases}
    conditions = ("expertise:none", "expertise:ek-top3", "expertise:stored-top3")
    conditioned = {(s.id, c): apply_condition(s, c) for s in cases for c in conditions}
    got = retrieved_bases(None, scenarios, conditioned)
    zhang, li = (s.id for s in cases)
    assert got[(zhang, "expertise:stored-top3")] == ("《民法典》第577条", "《民法典》第509条")
    assert got[(li, "expertise:stored-top3")] == ("《民法典》第1165条",)
    assert set(got[(zhang, "expertise:ek-top3")]) == {"《民法典》第577条", "《民法典》第509条"}
    assert (zhang, "expertise:none") not in got


def test_only_stored_cells_need_no_corpus_at_all(tmp_path: Path) -> None:
    [case] = _import(tmp_path, _record("张某", STORED))
    conditioned = {(case.id, "stored"): apply_condition(case, "expertise:stored-top3")}
    # A lone case: BM25 would have no corpus (its own bases are left out), stored needs none.
    assert retrieved_bases(None, {case.id: case}, conditioned) == {
        (case.id, "stored"): ("《民法典》第577条", "《民法典》第509条")
    }


def test_the_staged_mediator_cites_the_stored_bases_it_is_handed(tmp_path: Path) -> None:
    zhang, _ = _import(tmp_path, _record("张某", STORED), _record("李某", ["《民法典》第1165条"]))
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: t7\nprotocol: staged\nscenarios: ['agentmediation:cases.jsonl']\n"
        "conditions: [expertise:none, expertise:stored-top3]\nrounds: 2\n",
        encoding="utf-8",
    )
    runs = tmp_path / "runs"
    result = CliRunner().invoke(app, ["--store", str(runs), "experiment", str(spec)])
    assert result.exit_code == 0, result.output
    store = Store(runs)

    def said(condition: str) -> str:
        episode = store.load_episode(f"t7/{zhang.id}/{condition}/rule/r0").episode
        return " ".join(t.text for t in episode.turns)

    assert "《民法典》第509条" in said("expertise:stored-top3")
    assert "《民法典》第509条" not in said("expertise:none")


@pytest.mark.data("agentmediation")
def test_every_shared_case_keeps_its_stored_list() -> None:
    cases = import_agentmediation(CASES).scenarios
    lines = agentmediation_records(CASES)
    assert [s.legal.stored_retrieval for s in cases if s.legal] == [
        x.get("retrieve_articles") for x in lines
    ]
    # An empty list stays empty (16 such cases in the 308-case subset), never None.
    empty = sum(1 for x in lines if x.get("retrieve_articles") == [])
    assert sum(1 for s in cases if s.legal and s.legal.stored_retrieval == []) == empty


def test_the_suggested_retriever_names_the_corpus_only_where_the_case_lacks_bases() -> None:
    from disputelab.scenario.library import builtin_scenarios

    with_bases = builtin_scenarios()["boundary-wall"]  # legal bases, no stored list
    with pytest.raises(ConditionError) as info:
        apply_condition(with_bases, "expertise:stored-top5")
    assert str(info.value).endswith("use expertise:ek-top5")
    without = with_bases.model_copy(deep=True)
    assert without.legal is not None
    without.legal.legal_bases = []
    with pytest.raises(ConditionError) as info:
        apply_condition(without, "expertise:stored-top5")
    assert str(info.value).endswith(
        "use expertise:ek-top5 with a statute corpus (--corpus FILE, or corpus: in a spec)"
    )
