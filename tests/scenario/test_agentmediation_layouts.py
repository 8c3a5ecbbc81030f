"""AgentMediation layouts: the fetched pair (cases.jsonl + raw.jsonl) and a clone of the
paper's repository (data/case_back.json + data/data_resource.json) import alike, and the
dispute type is the raw record's whenever one matches, with a warning naming any case
that has none."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario.importers.agentmediation import (
    case_files,
    dispute_type_from_title,
    import_agentmediation,
    raw_file,
)
from tests.data_location import agentmediation_records
from tests.helpers import AGENTMEDIATION_CASES

DATA = AGENTMEDIATION_CASES.parent
CASES, RAW = DATA / "cases.jsonl", DATA / "raw.jsonl"
needs_data = pytest.mark.data("agentmediation")


def _case(name: str, players: list[str], brief: str) -> dict[str, object]:
    return {
        "name": f"{name}.pdf",
        "basic_back": brief,
        "players": players,
        "player_number": len(players),
        "point": "争议焦点为是否违约。",
        "article": ["《中华人民共和国民法典》第577条"],
        "fact": {"facts": [{"来源": "合同", "内容": "双方签有合同。"}]},
        "retrieve_articles": ["《中华人民共和国民法典》第五百七十七条"],
    }


# Titles whose cut differs from the raw keyword type, as 113 of the 308 shared ones do.
CASES_IN_REPO = [
    _case("某物业公司与李某纠纷调解案", ["李某", "物业公司法定代表人"], "李某拖欠物业费。"),
    _case("张某与王某民间借贷纠纷调解案", ["张某", "王某"], "张某诉至法院要求还款。"),
    _case("吴某与某公司服务合同纠纷调解案", ["吴某", "某公司法定代表人"], "吴某要求退款。"),
]
RAW_IN_REPO = [
    {
        "filename": "某物业公司与李某纠纷调解案.pdf",
        "content": {"关键词": "民事 物业服务合同纠纷 欠费"},
    },
    {
        "filename": "张某与王某民间借贷纠纷调解案.pdf",
        "content": {"关键词": "民事 借款合同纠纷 民间借贷"},
    },
]


def _lines(path: Path, records: Sequence[Mapping[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def _clone(root: Path) -> Path:
    """A clone of the AgentMediation repository as far as the importer cares."""
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# AgentMediation\n", encoding="utf-8")
    _lines(root / "data" / "data_resource.json", RAW_IN_REPO)
    return _lines(root / "data" / "case_back.json", CASES_IN_REPO)


def test_a_clone_root_its_data_folder_and_its_case_file_all_name_case_back_json(
    tmp_path: Path,
) -> None:
    back = _clone(tmp_path / "AgentMediation")
    assert case_files(tmp_path / "AgentMediation") == [back]
    assert case_files(back.parent) == [back]
    assert case_files(back) == [back]
    assert raw_file(back) == back.parent / "data_resource.json"


def test_a_folder_of_the_fetched_pair_never_takes_raw_jsonl_for_cases(tmp_path: Path) -> None:
    cases = _lines(tmp_path / "cases.jsonl", CASES_IN_REPO)
    _lines(tmp_path / "raw.jsonl", RAW_IN_REPO)
    assert case_files(tmp_path) == [cases]
    assert raw_file(cases) == tmp_path / "raw.jsonl"


def test_case_back_json_takes_its_types_from_data_resource_json(tmp_path: Path) -> None:
    result = import_agentmediation(_clone(tmp_path / "AgentMediation"))
    assert result.problems == []
    types = [s.legal.dispute_type for s in result.scenarios if s.legal]
    # Cut from the titles, the first type would be empty and the second 民间借贷纠纷.
    assert dispute_type_from_title("某物业公司与李某纠纷调解案", ["李某", "物业公司"]) == ""
    assert (
        dispute_type_from_title("张某与王某民间借贷纠纷调解案", ["张某", "王某"]) == "民间借贷纠纷"
    )
    assert types[:2] == ["物业服务合同纠纷", "借款合同纠纷"]


def test_a_case_no_raw_record_matches_is_named_in_a_warning_and_its_assumptions(
    tmp_path: Path,
) -> None:
    result = import_agentmediation(_clone(tmp_path / "AgentMediation"))
    third = result.scenarios[2]
    assert third.legal is not None and third.legal.dispute_type == "服务合同纠纷"
    named = [w for w in result.warnings if w.startswith(f"{third.id} ")]
    assert len(named) == 1
    assert "吴某与某公司服务合同纠纷调解案" in named[0]
    assert "no record in data_resource.json matches" in named[0]
    assert third.assumptions == [
        "dispute type cut from the title: 服务合同纠纷 (no raw record matches)"
    ]
    assert result.scenarios[0].assumptions == []


def test_a_raw_record_is_found_by_its_brief_when_the_titles_differ(tmp_path: Path) -> None:
    raw = {
        "filename": "另一标题.pdf",
        "content": {"关键词": "民事 教育培训合同纠纷 退款", "基本案情": "吴某要求退款。"},
    }
    _lines(tmp_path / "raw.jsonl", [raw])
    result = import_agentmediation(_lines(tmp_path / "cases.jsonl", CASES_IN_REPO[2:]))
    assert result.scenarios[0].assumptions == []
    assert result.scenarios[0].legal is not None
    assert result.scenarios[0].legal.dispute_type == "教育培训合同纠纷"


def test_unreadable_raw_lines_are_counted_in_a_warning(tmp_path: Path) -> None:
    (tmp_path / "raw.jsonl").write_text(
        json.dumps(RAW_IN_REPO[0], ensure_ascii=False)
        + "\n{oops\n"
        + json.dumps({"filename": "x.pdf", "content": {"关键词": "民事"}})
        + "\n",
        encoding="utf-8",
    )
    result = import_agentmediation(_lines(tmp_path / "cases.jsonl", CASES_IN_REPO[:1]))
    assert any(
        "raw.jsonl: 2 line(s) give no dispute type" in w and "lines 2, 3" in w
        for w in result.warnings
    )


def test_the_cli_imports_case_back_json_from_a_clone(tmp_path: Path) -> None:
    back = _clone(tmp_path / "AgentMediation")
    out = tmp_path / "imported"
    result = CliRunner().invoke(
        app,
        [
            "--store",
            str(tmp_path / "runs"),
            "scenarios",
            "import",
            "--from",
            "agentmediation",
            str(back),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    cases = import_agentmediation(back).scenarios
    assert sorted(p.name for p in out.glob("*.yaml")) == sorted(f"{s.id}.yaml" for s in cases)
    assert "物业服务合同纠纷" in (out / f"{cases[0].id}.yaml").read_text(encoding="utf-8")


@needs_data
def test_the_shared_cases_laid_out_as_the_repository_keep_every_raw_type(tmp_path: Path) -> None:
    data = tmp_path / "AgentMediation" / "data"
    data.mkdir(parents=True)
    shutil.copyfile(CASES, data / "case_back.json")
    shutil.copyfile(RAW, data / "data_resource.json")
    [back] = case_files(tmp_path / "AgentMediation")
    result = import_agentmediation(back)
    raw = {}
    for line in RAW.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        raw[rec["filename"].removesuffix(".pdf").strip()] = rec["content"]["关键词"].split()[1]
    assert len(result.scenarios) == len(agentmediation_records(CASES))
    differ = [s.id for s in result.scenarios if s.legal and s.legal.dispute_type != raw[s.title]]
    assert differ == []
    assert not any("dispute type" in w for w in result.warnings)


@pytest.mark.parametrize("where", ["root", "data"])
def test_the_cli_imports_a_clone_named_by_its_root_or_its_data_folder(
    tmp_path: Path, where: str
) -> None:
    back = _clone(tmp_path / "AgentMediation")
    named = back.parent.parent if where == "root" else back.parent
    out = tmp_path / "imported"
    result = CliRunner().invoke(
        app, ["scenarios", "import", "--from", "agentmediation", str(named), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert len(list(out.glob("*.yaml"))) == 3
    flat = " ".join(result.output.split())
    assert flat.count("imported 3 case(s) from") == 1  # the raw records are not cases


def test_a_folder_without_case_files_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(
        app, ["scenarios", "import", "--from", "agentmediation", str(tmp_path / "empty")]
    )
    assert result.exit_code == 2
    assert "no agentmediation case files in this folder" in result.output
