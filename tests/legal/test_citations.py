"""Statute citations: every shape the AgentMediation gold bases take reads to one canonical
form per article, and two articles of one regulation never collapse into one basis."""

from __future__ import annotations

import json
import re
from typing import NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.evaluation.outcomes import legal_basis_recall
from disputelab.legal.citations import chinese_number, normalize_legal_basis
from tests.helpers import AGENTMEDIATION_CASES

CASES = AGENTMEDIATION_CASES
needs_data = pytest.mark.data("agentmediation")

_DIGIT = "零一二三四五六七八九"


def to_chinese(n: int) -> str:
    """Article numbers as Chinese numerals (一千零八十, 十五, 一万零三), written
    independently of the parser so the two check each other."""
    if n == 0:
        return "零"
    out, gap = "", False
    for unit, name in ((10000, "万"), (1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d, n = divmod(n, unit)
        if unit == 10000 and d:
            out += to_chinese(d) + name
        elif d:
            if gap and out:
                out += "零"
            out += ("" if (name == "十" and d == 1 and not out) else _DIGIT[d]) + name
        gap = (not d and bool(out)) or (gap and not d)
    return out


# Every shape of the gold bases of the real cases (1,054 in the 308-case subset), with
# what it must read as. The shape test below fails on a gold basis of a shape not listed here.
SHAPES: list[tuple[str, str]] = [
    ("《中华人民共和国民法典》第509条", "《民法典》第509条"),
    ("《中华人民共和国民法典》第五百零九条", "《民法典》第509条"),
    ("《中华人民共和国民法典》第178条第3款", "《民法典》第178条"),
    ("《中华人民共和国民法典》第26条第二款", "《民法典》第26条"),
    ("《中华人民共和国证券法》（2019年修正）第85条", "《证券法》第85条"),
    (
        "《最高人民法院关于审理民间借贷案件适用法律若干问题的规定》（2020年第二次修正）第24条",
        "《最高人民法院关于审理民间借贷案件适用法律若干问题的规定》第24条",
    ),
    (
        "《工伤保险条例》（2010年修订）（中华人民共和国国务院令第586号）第15条",
        "《工伤保险条例》第15条",
    ),
    ("《最低工资规定》 （劳动和社会保障部令第21号） 第12条", "《最低工资规定》第12条"),
    (
        "《最高人民法院关于审理商品房买卖合同纠纷案件适用法律若干问题的解释》（2020年修正）"
        "第14条第1款",
        "《最高人民法院关于审理商品房买卖合同纠纷案件适用法律若干问题的解释》第14条",
    ),
    # a version note inside the title is the law all the same, as one after it is
    ("《中华人民共和国专利法（2020年修正）》第11条", "《专利法》第11条"),
    ("《中华人民共和国残疾人保障法 （2018年修正）》第53条", "《残疾人保障法》第53条"),
    (
        "《最高人民法院关于审理买卖合同纠纷案件适用法律问题的解释（2020修正）》第19条",
        "《最高人民法院关于审理买卖合同纠纷案件适用法律问题的解释》第19条",
    ),
    (
        "《关于维护新就业形态劳动者劳动保障权益的指导意见》",
        "《关于维护新就业形态劳动者劳动保障权益的指导意见》",
    ),
    (
        "《最高人民法院关于审理证券市场虚假陈述侵权民事赔偿案件的若干规定》（法释〔2022〕2号）",
        "《最高人民法院关于审理证券市场虚假陈述侵权民事赔偿案件的若干规定》",
    ),
    ("《福建省价格争议调解处理办法》（福建省人民政府令第224号）", "《福建省价格争议调解处理办法》"),
    (
        "《内蒙古自治区矛盾纠纷多元化解条例》"
        "（内蒙古自治区第十四届人民代表大会常务委员会公告第二十七号）",
        "《内蒙古自治区矛盾纠纷多元化解条例》",
    ),
    (
        "《最高人民法院关于审理商品房买卖合同纠纷案件适用法律若干问题的解释》（2020年修正）"
        "（法释〔2020〕17号）",
        "《最高人民法院关于审理商品房买卖合同纠纷案件适用法律若干问题的解释》",
    ),
    (
        "《最高人民法院关于审理商品房买卖合同纠纷案件适用法律若干问题的解释（2020年修正）》",
        "《最高人民法院关于审理商品房买卖合同纠纷案件适用法律若干问题的解释》",
    ),
    (
        "《厦门市城市既有住宅增设电梯指导意见(2018修订版)》（厦建房〔2018〕55号）",
        "《厦门市城市既有住宅增设电梯指导意见》",
    ),
    (
        "《最高人民法院、中国残疾人联合会关于为残疾人提供更加优质诉讼服务的十条意见的通知》"
        " （法 〔2024〕40号）",
        "《最高人民法院、中国残疾人联合会关于为残疾人提供更加优质诉讼服务的十条意见的通知》",
    ),
    (
        "最高人民法院、国家发展和改革委员会、司法部《关于深入开展价格争议纠纷调解工作的意见》"
        "（法发〔2019〕32号）",
        "《关于深入开展价格争议纠纷调解工作的意见》",
    ),
    (
        "最高人民法院 国家发展和改革委员会 司法部印发《关于深入开展价格争议纠纷调解工作的意见》"
        "的通知（法发〔2019〕32号）",
        "《关于深入开展价格争议纠纷调解工作的意见》",
    ),
    (
        "《最高人民法院关于审理人身损害赔偿案件适用法律若干问题的解释》（2022修正）法释〔2022〕14号",
        "《最高人民法院关于审理人身损害赔偿案件适用法律若干问题的解释》",
    ),
]

_NUM = "[一二三四五六七八九十百千万零〇两\\d]+"


def shape(citation: str) -> str:
    """A citation's shape: T the title, I an issuer before it, P a bracketed note, A an
    article, K a paragraph, n a number; other words are kept."""
    s = re.sub(r"\s+", "", citation)
    s = re.sub(r"《[^《》]+》", "T", s, count=1)
    while True:
        marked = re.sub(r"（[^（）]*）|\([^()]*\)|〔[^〔〕]*〕", "P", s)
        if marked == s:
            break
        s = marked
    s = re.sub(rf"第{_NUM}条", "A", s)
    s = re.sub(rf"第{_NUM}款", "K", s)
    s = re.sub(r"^[^T]+T", "IT", s)
    return re.sub(r"\d+", "n", s)


@pytest.mark.parametrize(("citation", "canonical"), SHAPES)
def test_each_gold_shape_reads_to_its_canonical_form(citation: str, canonical: str) -> None:
    assert normalize_legal_basis(citation) == canonical
    assert normalize_legal_basis(canonical) == canonical


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (
            "《工伤保险条例》（2010年修订）（中华人民共和国国务院令第586号）第15条",
            "《工伤保险条例》（2010年修订）（中华人民共和国国务院令第586号）第39条",
        ),
        (
            "《物业管理条例》（2018年修订）（中华人民共和国国务院令第698号）第35条",
            "《物业管理条例》（2018年修订）（中华人民共和国国务院令第698号）第50条",
        ),
        (
            "《最高人民法院关于审理民间借贷案件适用法律若干问题的规定》（2020年第二次修正）第24条",
            "《最高人民法院关于审理民间借贷案件适用法律若干问题的规定》（2020年第二次修正）第9条",
        ),
    ],
)
def test_two_articles_of_one_regulation_are_two_bases(one: str, other: str) -> None:
    assert normalize_legal_basis(one) != normalize_legal_basis(other)
    # a clean citation of the right article scores, and of the wrong one does not
    clean = normalize_legal_basis(one)
    assert legal_basis_recall([one], [clean]).value == 1.0
    assert legal_basis_recall([one], [normalize_legal_basis(other)]).value == 0.0


def test_a_title_cited_without_an_article_is_not_any_of_its_articles() -> None:
    bare = "《工伤保险条例》（中华人民共和国国务院令第586号）"
    assert normalize_legal_basis(bare) == "《工伤保险条例》"
    assert normalize_legal_basis("《工伤保险条例》第15条") != normalize_legal_basis(bare)


def test_an_article_with_a_sub_article_keeps_it_apart_from_the_article() -> None:
    assert normalize_legal_basis("《中华人民共和国刑法》第一百三十三条之一") == "《刑法》第133条之1"
    assert normalize_legal_basis("《刑法》第133条") == "《刑法》第133条"


def test_an_article_written_without_its_di_or_with_spaces_still_reads() -> None:
    assert normalize_legal_basis("《民法典》577条") == "《民法典》第577条"
    assert normalize_legal_basis("《民法典》 第 584 条") == "《民法典》第584条"


def test_an_article_written_only_inside_brackets_still_names_it() -> None:
    assert (
        normalize_legal_basis("《中华人民共和国民法典》（第五百七十七条）") == "《民法典》第577条"
    )
    # but an article outside the brackets wins over a 第…条 inside them
    assert normalize_legal_basis("《民法典》（原第107条）第577条") == "《民法典》第577条"


def test_only_the_first_article_and_only_the_first_title_count() -> None:
    assert normalize_legal_basis("《民法典》第五百七十七条、第五百八十四条") == "《民法典》第577条"
    # the article after a second title belongs to that title, not the first
    assert normalize_legal_basis("《民法典》与《劳动法》第50条") == "《民法典》"


def test_text_without_a_title_or_an_article_is_compared_as_written() -> None:
    assert normalize_legal_basis("  民法典 ") == "民法典"
    assert normalize_legal_basis("调解协议第3条") == "调解协议第3条"  # not a statute's name
    assert normalize_legal_basis("双方约定第5条") == "双方约定第5条"


@pytest.mark.parametrize(
    ("bare", "titled"),
    [
        ("民法典第509条", "《民法典》第509条"),
        ("  民法典第584条 ", "《民法典》第584条"),
        ("中华人民共和国民法典第五百零九条", "《中华人民共和国民法典》第509条"),
        ("依据劳动合同法第39条第一款", "《劳动合同法》第39条"),
        ("工伤保险条例（2010年修订）第15条", "《工伤保险条例》第15条"),
        ("民法通则第5条", "《民法通则》第5条"),
        ("刑法第一百三十三条之一", "《刑法》第133条之1"),
    ],
)
def test_a_law_named_without_its_brackets_matches_the_bracketed_citation(
    bare: str, titled: str
) -> None:
    assert normalize_legal_basis(bare) == normalize_legal_basis(titled)
    assert legal_basis_recall([titled], [bare]).value == 1.0


def test_a_bare_law_name_matches_no_other_article_and_no_other_law() -> None:
    gold = ["《中华人民共和国民法典》第509条"]
    assert legal_basis_recall(gold, ["民法典第510条"]).value == 0.0
    assert legal_basis_recall(gold, ["民法典第50条"]).value == 0.0
    assert legal_basis_recall(gold, ["劳动法第509条"]).value == 0.0
    assert legal_basis_recall(gold, ["民法典"]).value == 0.0


# ---- property tests -------------------------------------------------------------------
def test_the_chinese_numeral_writer_agrees_with_hand_written_numbers() -> None:
    cases = {1: "一", 10: "十", 15: "十五", 20: "二十", 101: "一百零一", 584: "五百八十四"}
    cases |= {
        1080: "一千零八十",
        1165: "一千一百六十五",
        10003: "一万零三",
        20510: "二万零五百一十",
    }
    assert {n: to_chinese(n) for n in cases} == cases


@given(st.integers(min_value=1, max_value=99_999))
def test_chinese_numerals_and_digits_read_back_to_their_number(n: int) -> None:
    assert chinese_number(to_chinese(n)) == n
    assert chinese_number(str(n)) == n


_LAWS = ["民法典", "工伤保险条例", "最低工资规定", "证券法", "物业管理条例", "劳动合同法"]
_NOTE_TEXT = st.text(
    alphabet="第一二三四五六七八九十条款号令年修正订国务院0123456789 ", max_size=12
)
_NOTES = st.lists(
    st.tuples(st.sampled_from(["（）", "()", "〔〕"]), _NOTE_TEXT).map(
        lambda pair: pair[0][0] + pair[1] + pair[0][1]
    ),
    max_size=3,
)


class Layout(NamedTuple):
    """How a citation is written, apart from its article number."""

    law: str
    full: bool
    notes: list[str]
    space: str
    chinese: bool
    di: str
    paragraph: str

    def write(self, n: int) -> str:
        title = f"《{'中华人民共和国' if self.full else ''}{self.law}》"
        number = to_chinese(n) if self.chinese else str(n)
        article = f"{self.di}{number}条{self.paragraph}"
        return title + self.space.join(self.notes) + self.space + article


layouts = st.builds(
    Layout,
    law=st.sampled_from(_LAWS),
    full=st.booleans(),
    notes=_NOTES,
    space=st.sampled_from(["", " "]),
    chinese=st.booleans(),
    di=st.sampled_from(["第", "第", ""]),
    paragraph=st.sampled_from(["", "第1款", "第二款"]),
)
articles = st.integers(min_value=1, max_value=2000)


@given(layouts, articles)
def test_any_article_reads_as_its_law_and_number_past_any_notes(layout: Layout, n: int) -> None:
    assert normalize_legal_basis(layout.write(n)) == f"《{layout.law}》第{n}条"


@given(layouts, articles, articles)
def test_two_articles_of_one_law_share_a_form_only_when_they_are_one_article(
    layout: Layout, a: int, b: int
) -> None:
    one, other = normalize_legal_basis(layout.write(a)), normalize_legal_basis(layout.write(b))
    assert (one == other) == (a == b)


def bare(citation: str) -> str:
    """The citation with the 《》 around its law taken off."""
    return citation.replace("《", "", 1).replace("》", "", 1)


@given(layouts, articles)
def test_a_bare_law_name_reads_as_the_bracketed_one(layout: Layout, n: int) -> None:
    assert normalize_legal_basis(bare(layout.write(n))) == f"《{layout.law}》第{n}条"


@given(layouts, layouts, articles, articles)
def test_bare_and_bracketed_citations_match_only_on_one_law_and_one_article(
    one: Layout, other: Layout, a: int, b: int
) -> None:
    written = normalize_legal_basis(one.write(a))
    said = normalize_legal_basis(bare(other.write(b)))
    assert (written == said) == (one.law == other.law and a == b)


@given(layouts, articles)
def test_the_canonical_form_is_its_own_canonical_form(layout: Layout, n: int) -> None:
    once = normalize_legal_basis(layout.write(n))
    assert normalize_legal_basis(once) == once


# ---- every gold basis of the real cases ------------------------------------------------
@pytest.fixture(scope="module")
def gold() -> list[list[str]]:
    rows = [json.loads(line) for line in CASES.read_text("utf-8").splitlines() if line.strip()]
    return [list(r["article"]) for r in rows]


@needs_data
def test_every_gold_basis_has_a_shape_tested_above(gold: list[list[str]]) -> None:
    known = {shape(c) for c, _ in SHAPES}
    untested = sorted({f"{shape(b)}: {b}" for bs in gold for b in bs if shape(b) not in known})
    assert untested == []


@needs_data
def test_every_gold_basis_round_trips_to_a_distinct_canonical_form(
    gold: list[list[str]],
) -> None:
    assert gold, "the case file holds no case"
    for i, bases in enumerate(gold):
        forms = [normalize_legal_basis(b) for b in bases]
        assert [normalize_legal_basis(f) for f in forms] == forms, f"case {i}"
        assert len(set(forms)) == len(set(bases)), f"case {i}: {bases} -> {forms}"


@needs_data
def test_every_gold_basis_with_an_article_keeps_that_article(gold: list[list[str]]) -> None:
    for bases in gold:
        for basis in bases:
            form = normalize_legal_basis(basis)
            found = re.search(r"第(\d+)条$", form)
            assert (found is not None) == ("A" in shape(basis)), basis
            if found is not None:
                n = int(found.group(1))
                raw = re.sub(r"\s+", "", basis)
                assert f"第{n}条" in raw or f"第{to_chinese(n)}条" in raw, basis


def test_an_interpretation_naming_a_law_inside_its_title_is_cited_by_its_own_title() -> None:
    outer = "《最高人民法院关于适用《中华人民共和国民法典》婚姻家庭编的解释（一）》第二十九条"
    got = normalize_legal_basis(outer)
    assert got == "《最高人民法院关于适用《中华人民共和国民法典》婚姻家庭编的解释（一）》第29条"
    assert got != normalize_legal_basis("《中华人民共和国民法典》第二十九条")
