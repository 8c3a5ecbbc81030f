"""The remediator paper's released data (SADAS) read from files of its shapes, and the
Chinese two-party price scenarios `scenarios import --from sadas` builds from the
dialogues' negotiation settings. The files are ours (`tests/sadas_files.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario import load_scenario
from disputelab.scenario.importers import read_cases
from disputelab.scenario.importers.sadas import SadasError, read_sadas
from disputelab.scenario.importers.sadas_scenarios import amounts, sides_of
from tests.sadas_files import EXEMPLARS, SALARY, exemplar_file, pair, pair_file


def test_an_exemplar_record_splits_at_its_violation_mark(tmp_path: Path) -> None:
    found = read_sadas(exemplar_file(tmp_path))
    assert found.kind == "exemplars" and not found.problems
    first = found.records[0]
    assert [ln.speaker for ln in first.lines] == ["buyer", "seller", "buyer", "seller"]
    assert first.violation == EXEMPLARS[0]["last_sentence"]
    assert "【violation】" not in first.lines[-1].text
    assert first.remediation.startswith("我理解您想控制成本")  # header stripped
    assert not first.notes
    assert len(found.records[1].history) == 5  # two more turns before its violation


def test_a_rewritepair_gives_its_dialogue_last_sentence_and_rewrite(tmp_path: Path) -> None:
    found = read_sadas(pair_file(tmp_path))
    assert found.kind == "pairs" and len(found.records) == 3
    salary = found.records[0]
    assert [ln.speaker for ln in salary.lines] == ["人物A", "人物B", "人物A", "人物B"]
    assert salary.violation == SALARY[-1].split(": ", 1)[1]
    assert salary.remediation.startswith("我理解公司有预算的考虑")
    assert "</s>" not in salary.remediation and not salary.notes


def test_what_is_read_past_is_noted_on_the_record(tmp_path: Path) -> None:
    items = [dict(EXEMPLARS[0]) for _ in range(3)]
    items[0]["conversation"] = items[0]["conversation"].replace("【violation】", "")
    items[1]["last_sentence"] = "另一句话。"
    items[2]["remediation"] = '# Remediation:\nassistant: "好的，我们再谈谈。"'
    found = read_sadas(exemplar_file(tmp_path, items))
    notes = [r.notes for r in found.records]
    assert notes[0] == ["no 【violation】 mark; the dialogue's last line taken as the violation"]
    assert notes[1] == [
        "the last sentence given is not the dialogue's last line; the given one taken"
    ]
    assert found.records[1].violation == "另一句话。"
    assert found.records[2].remediation == "好的，我们再谈谈。"
    assert notes[2] == [
        "a speaker label before the rewrite removed",
        "quotes around the rewrite removed",
    ]


@pytest.mark.parametrize(
    ("item", "why"),
    [
        ("text", "not a JSON object"),
        ({"conversation": "buyer: 你好", "last_sentence": "你好"}, "'remediation' is missing"),
        ({"conversation": 3, "last_sentence": "", "remediation": "x"}, "not text (int)"),
        ({"conversation": "没有说话人", "last_sentence": "x", "remediation": "y"}, "no dialogue"),
        ({"conversation": "buyer: 你好", "last_sentence": "你好", "remediation": " "}, "empty"),
    ],
)
def test_a_record_that_cannot_be_read_is_a_problem_naming_it(
    tmp_path: Path, item: object, why: str
) -> None:
    found = read_sadas(exemplar_file(tmp_path, [EXEMPLARS[0], item]))
    assert len(found.records) == 1
    ((number, problem),) = found.problems
    assert number == 2 and why in problem


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("x.csv", "dialogue,rewrite\na,b\n", "no `text` column"),
        ("y.json", "[1,", "not JSON"),
        ("z.json", '{"conversation": "buyer: 你好"}', "a JSON list of records, not one object"),
    ],
)
def test_a_file_that_is_neither_shape_fails_in_one_line(
    tmp_path: Path, name: str, text: str, why: str
) -> None:
    bad = tmp_path / name
    bad.write_text(text)
    with pytest.raises(SadasError, match=why) as caught:
        read_sadas(bad)
    assert str(bad) not in str(caught.value)  # the caller puts the path where it goes
    code, _, err = _import(tmp_path, bad)
    assert code == 2 and err == f"error: {bad}: {caught.value}"


def test_a_house_of_a_million_gets_an_id_of_plain_digits(tmp_path: Path) -> None:
    lines = ["人物A: 这套房子还卖吗？", "人物B: 卖，$1,200,000。", "人物A: $950,000行吗？"]
    texts = [pair([*lines, "人物B: 你开玩笑吧，$1,150,000.5。"], "抱歉，$1,150,000可以吗？")]
    (house,) = read_cases("sadas", pair_file(tmp_path, texts)).scenarios
    assert house.id == "sadas-house-1200000-950000"


def test_prices_are_read_as_the_dialogues_write_them() -> None:
    assert amounts("单价$80，或者30美元，月薪5,000元，总价60万元") == [80, 30, 5000, 600000]
    assert amounts("以每单元$30的价格") == [30]  # 单元 is no currency


def test_sides_come_from_the_labels_or_from_who_names_the_higher_price(tmp_path: Path) -> None:
    exemplar = read_sadas(exemplar_file(tmp_path)).records[0]
    assert sides_of(exemplar.lines) == {"buyer": "buyer", "seller": "seller"}
    salary = read_sadas(pair_file(tmp_path)).records[0]
    assert sides_of(salary.lines) == {"人物A": "buyer", "人物B": "seller"}


def test_one_chinese_scenario_per_negotiation_setting(tmp_path: Path) -> None:
    found = read_cases("sadas", exemplar_file(tmp_path))
    (product,) = found.scenarios  # six dialogues, one setting
    assert product.id == "sadas-product-80-50" and product.language == "zh"
    assert product.domain == "business-to-business" and "工业商品" in product.background
    (price,) = product.terms
    assert price.targets == {"seller": 80, "buyer": 50}
    # The lowest price the seller offered ($72; the buyer's $50 and $55 it quotes are no
    # offers of its own) and the highest the buyer did.
    assert price.reservations == {"seller": 72, "buyer": 55}
    assert "6 段对话" in product.history
    assert any(a.startswith("reservations:") for a in product.assumptions)


def test_thepairs_give_a_salary_where_hr_opens_and_a_house(tmp_path: Path) -> None:
    found = read_cases("sadas", pair_file(tmp_path))
    by_id = {s.id: s for s in found.scenarios}
    assert sorted(by_id) == ["sadas-house-900000-700000", "sadas-salary-7000-4000"]
    salary = by_id["sadas-salary-7000-4000"]
    assert [p.id for p in salary.parties] == ["hr", "candidate"]  # HR speaks first
    assert salary.terms[0].targets == {"candidate": 7000, "hr": 4000}
    assert any(a.startswith("no zone of agreement") for a in salary.assumptions)
    house = by_id["sadas-house-900000-700000"]
    assert house.domain == "transactional" and "2 段对话" in (house.history or "")


def _import(tmp_path: Path, case: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        app, ["scenarios", "import", "--from", "sadas", str(case), "--out", str(tmp_path / "o")]
    )
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def test_the_cli_imports_the_scenarios_and_warns_about_what_it_read_past(tmp_path: Path) -> None:
    one_price = {
        "conversation": "buyer: 你好\nseller: $90",
        "last_sentence": "",
        "remediation": "好",
    }
    items = [*EXEMPLARS, one_price]
    code, out, err = _import(tmp_path, exemplar_file(tmp_path, items))
    assert code == 0, err
    assert "imported 1 case(s)" in out
    # The last record names one price only: read, but no setting; said so.
    assert "record 7: the buyer side names no price of its own; no scenario from it" in err
    assert "record 7: no last sentence given" in err
    saved = load_scenario(tmp_path / "o" / "sadas-product-80-50.yaml")
    assert saved.language == "zh" and saved.terms[0].name == "单价"


def test_a_record_that_cannot_be_read_is_an_error_naming_it_and_the_rest_imports(
    tmp_path: Path,
) -> None:
    case = exemplar_file(tmp_path, [*EXEMPLARS, {"conversation": "buyer: 你好"}])
    code, out, err = _import(tmp_path, case)
    assert code == 2
    assert "record 7: 'last_sentence' is missing" in err
    assert (tmp_path / "o" / "sadas-product-80-50.yaml").is_file()
    assert "Traceback" not in out + err


def test_a_spec_names_sadas_files_as_a_source(tmp_path: Path) -> None:
    from disputelab.plan.scenario_refs import find_scenarios

    exemplar_file(tmp_path)
    found = find_scenarios(["sadas:all_icl_example.json"], tmp_path)
    assert list(found.scenarios) == ["sadas-product-80-50"] and not found.problems
