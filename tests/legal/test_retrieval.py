"""Statute retrieval: BM25 over jieba tokens, nested top-k, leave-one-out, and real recall."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from disputelab.evaluation.outcomes import legal_basis_recall
from disputelab.legal.retrieval import CorpusError, StatuteIndex, case_key, case_query, tokenize
from disputelab.scenario.importers.agentmediation import import_agentmediation
from disputelab.scenario.schema import Fact, LegalContext, Scenario
from tests.helpers import AGENTMEDIATION_CASES, scenario

CASES = AGENTMEDIATION_CASES

STATUTES = [
    {
        "citation": "《中华人民共和国民法典》第一千零七十九条",
        "text": "夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。",
    },
    {
        "citation": "《中华人民共和国民法典》第944条",
        "text": "业主应当按照约定向物业服务人支付物业费。物业服务人已经按照约定提供服务的，"
        "业主不得以未接受或者无需接受相关物业服务为由拒绝支付物业费。",
    },
    {
        "citation": "《中华人民共和国劳动合同法》第三十条",
        "text": "用人单位应当按照劳动合同约定和国家规定，向劳动者及时足额支付劳动报酬。",
    },
    {
        "citation": "《中华人民共和国民法典》第1165条",
        "text": "行为人因过错侵害他人民事权益造成损害的，应当承担侵权责任。",
    },
]


def _corpus(tmp_path: Path) -> StatuteIndex:
    path = tmp_path / "statutes.jsonl"
    path.write_text("\n".join(json.dumps(e, ensure_ascii=False) for e in STATUTES), "utf-8")
    return StatuteIndex.from_file(path)


def test_tokens_are_jieba_words_without_punctuation_but_with_digits() -> None:
    tokens = tokenize("李某拖欠4年半物业费，一直拒不缴纳！  《民法典》第509条")
    assert "物业费" in tokens and "509" in tokens and "4" in tokens
    assert not any(t.strip("，！《》 ") == "" for t in tokens)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("业主长期拖欠物业费，物业公司起诉要求支付", "《民法典》第944条"),
        ("公司拖欠工人工资，劳动者要求及时足额支付劳动报酬", "《劳动合同法》第30条"),
        ("丈夫起诉离婚，妻子不同意", "《民法典》第1079条"),
    ],
)
def test_the_matching_article_ranks_first(tmp_path: Path, query: str, expected: str) -> None:
    assert _corpus(tmp_path).retrieve(query, k=2)[0] == expected


def test_citations_are_normalised_and_results_are_nested_in_k(tmp_path: Path) -> None:
    index = _corpus(tmp_path)
    assert "《民法典》第1079条" in index.citations
    query = "业主拖欠物业费，劳动者要求支付劳动报酬，造成损害应当承担责任"
    top3, top10 = index.retrieve(query, k=3), index.retrieve(query, k=10)
    assert len(top3) == 3
    assert top10[:3] == top3
    assert len(set(top10)) == len(top10)


def test_a_query_sharing_no_word_with_the_corpus_retrieves_nothing(tmp_path: Path) -> None:
    assert _corpus(tmp_path).retrieve("量子计算", k=5) == []
    with pytest.raises(ValueError, match="k must be"):
        _corpus(tmp_path).retrieve("物业费", k=0)


def _case(sid: str, brief: str, bases: list[str]) -> Scenario:
    s = scenario("tenancy")
    s.id = sid
    s.legal = LegalContext(
        dispute_type="物业服务合同纠纷",
        brief=brief,
        facts=[Fact(source="缴费记录", content=brief)],
        legal_bases=bases,
    )
    return s


def test_leave_one_out_never_returns_a_citation_only_the_query_case_holds() -> None:
    own = _case("c1", "业主拖欠物业费三年拒不缴纳", ["《中华人民共和国民法典》第九百四十四条"])
    other = _case("c2", "业主拖欠物业费两年", ["《中华人民共和国民法典》第509条"])
    index = StatuteIndex.from_cases([own, other])
    assert "《民法典》第944条" in index.retrieve(case_query(own), k=5)
    assert index.retrieve(case_query(own), k=5, exclude_case=case_key(own)) == ["《民法典》第509条"]


def test_the_same_case_under_another_id_is_left_out_too() -> None:
    own = _case("c1", "业主拖欠物业费三年拒不缴纳", ["《中华人民共和国民法典》第九百四十四条"])
    twin = _case("c9", "业主拖欠物业费三年拒不缴纳", ["《中华人民共和国民法典》第九百四十四条"])
    other = _case("c2", "业主拖欠物业费两年", ["《中华人民共和国民法典》第509条"])
    index = StatuteIndex.from_cases([own, twin, other])
    assert case_key(own) == case_key(twin)
    assert index.retrieve(case_query(own), k=5, exclude_case=case_key(own)) == ["《民法典》第509条"]


def test_the_case_query_leaves_out_the_gold_answer() -> None:
    s = _case("c1", "业主拖欠物业费", ["《中华人民共和国民法典》第944条"])
    assert s.legal is not None
    s.legal.points_of_contention = ["争议焦点在于业主是否违约"]
    query = case_query(s)
    assert "944" not in query and "争议焦点" not in query


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.jsonl", '{"citation": "x", "text": "y"}\n{oops', "bad.jsonl:2: not valid JSON"),
        ("bad.jsonl", '{"text": "y"}', "bad.jsonl:1: 'citation' must be"),
        ("bad.jsonl", '["a", "b"]', "bad.jsonl:1: expected a mapping"),
        ("bad.yaml", "citation: x\ntext: y\n", "expected a YAML list"),
        ("bad.yaml", "- {citation: x, text: [1, 2}\n", "not valid YAML"),
        ("bad.yaml", "- {citation: x, text: 3}\n", "entry 1: 'text' must be a string"),
        ("empty.jsonl", "\n", "no entries"),
    ],
)
def test_a_bad_corpus_file_is_a_one_line_error(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CorpusError, match=message) as info:
        StatuteIndex.from_file(path)
    assert "\n" not in str(info.value)


def test_a_missing_corpus_file_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="cannot read"):
        StatuteIndex.from_file(tmp_path / "none.yaml")


def test_a_yaml_corpus_works_like_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "statutes.yaml"
    entries = [
        ("《中华人民共和国民法典》第944条", "业主应当按照约定支付物业费。"),
        ("《中华人民共和国民法典》第1165条", "过错侵害他人民事权益应当承担侵权责任。"),
    ]
    text = "".join(f"- citation: {c}\n  text: {t}\n" for c, t in entries)
    path.write_text(text, encoding="utf-8")
    assert StatuteIndex.from_file(path).retrieve("拖欠物业费", k=1) == ["《民法典》第944条"]


@pytest.mark.slow  # a BM25 query per real case
@pytest.mark.data("agentmediation")
def test_leave_one_out_recall_on_the_shared_cases_grows_with_k() -> None:
    cases = import_agentmediation(CASES).scenarios
    start = time.perf_counter()
    index = StatuteIndex.from_cases(cases)
    built = time.perf_counter() - start
    recall: dict[int, list[float]] = {3: [], 5: [], 10: []}
    start = time.perf_counter()
    for s in cases:
        assert s.legal is not None
        ranked = index.retrieve(case_query(s), k=10, exclude_case=case_key(s))
        for k, values in recall.items():
            value = legal_basis_recall(s.legal.legal_bases, ranked[:k]).value
            if not math.isnan(value):
                values.append(value)
    queried = time.perf_counter() - start
    means = {k: sum(v) / len(v) for k, v in recall.items()}
    print(
        f"\nleave-one-out legal-basis recall over {len(recall[3])} cases: "
        + ", ".join(f"top-{k} {m:.4f}" for k, m in means.items())
        + f"; {len(index.docs)} documents, build {built:.2f} s, "
        f"{len(cases)} queries {queried:.2f} s"
    )
    assert means[10] >= means[5] >= means[3] > 0
