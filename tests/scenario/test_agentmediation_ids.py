"""An imported AgentMediation case's id comes from the case (a short hash of its title),
never from its line: the 308-case subset and the full public repository give a case they
share the same id. Ids used to be line numbers (am-001); the import record maps those old
ids to the new ones, so an old reference still resolves."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario.import_record import RECORD_NAME, ImportRecord
from disputelab.scenario.importers import read_cases
from disputelab.scenario.importers.agentmediation import case_hash, import_agentmediation
from disputelab.scenario.io import dump_scenario
from disputelab.scenario.library import resolve_scenario
from tests.helpers import AGENTMEDIATION_CASES


def _record(name: str, brief: str = "张某要求对方返还欠款，对方拒不支付。") -> dict[str, object]:
    return {
        "name": f"{name}.pdf",
        "basic_back": brief,
        "players": ["张某", "李某"],
        "player_number": 2,
        "point": "李某是否应当返还欠款。",
        "article": ["《中华人民共和国民法典》第675条"],
        "fact": {"facts": [{"来源": "借条", "内容": "李某向张某借款一万元。"}]},
    }


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    return _write(path, [json.dumps(r, ensure_ascii=False) for r in records])


def _ids_by_title(path: Path) -> dict[str, str]:
    return {s.title: s.id for s in import_agentmediation(path).scenarios}


A, B, C = (
    "张某与李某民间借贷纠纷调解案",
    "王某与陈某相邻关系纠纷调解案",
    "赵某与某物业公司物业服务合同纠纷调解案",
)


def test_an_id_is_am_and_eight_hex_digits_of_the_title_wherever_the_case_sits(
    tmp_path: Path,
) -> None:
    first = _ids_by_title(_jsonl(tmp_path / "a.jsonl", [_record(A), _record(B)]))
    later = _ids_by_title(_jsonl(tmp_path / "b.jsonl", [_record(C), _record(B), _record(A)]))
    assert first[A] == later[A] == "am-" + case_hash(f"{A}.pdf")
    assert first[B] == later[B]
    assert len(first[A]) == len("am-") + 8 and int(first[A][3:], 16) >= 0


def test_whitespace_and_full_width_forms_in_a_title_do_not_change_its_id() -> None:
    assert case_hash(f"{A}.pdf") == case_hash(f"  {A}     .pdf") == case_hash(f"\t{A}")
    assert case_hash("张某等１７人与某公司纠纷案") == case_hash("张某等17人与某公司纠纷案")
    assert case_hash(A) != case_hash(B)


def test_cases_sharing_a_title_hash_title_and_brief_whatever_their_order(tmp_path: Path) -> None:
    one, two = _record(A, "张某借给李某一万元。"), _record(A, "李某借给张某两万元。")
    forward = import_agentmediation(_jsonl(tmp_path / "f.jsonl", [one, two])).scenarios
    back = import_agentmediation(_jsonl(tmp_path / "b.jsonl", [two, one])).scenarios
    assert {s.background: s.id for s in forward} == {s.background: s.id for s in back}
    assert len({s.id for s in forward}) == 2
    assert "am-" + case_hash(f"{A}.pdf") not in {s.id for s in forward}


def test_a_line_repeating_a_case_is_reported_not_imported_twice(tmp_path: Path) -> None:
    line = json.dumps(_record(A), ensure_ascii=False)
    result = import_agentmediation(_write(tmp_path / "c.jsonl", [line, line]))
    assert len(result.scenarios) == 1
    [(where, why)] = result.problems
    assert where == 2 and why.startswith("the same case as line 1") and "\n" not in why


def test_the_import_maps_each_old_line_number_id_to_the_id_now(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "cases.jsonl", [_record(A), _record(B)])
    found = read_cases("agentmediation", path)
    ids = {s.title: s.id for s in found.scenarios}
    assert found.positional == {"am-001": (ids[A], A), "am-002": (ids[B], B)}


def _import_cli(tmp_path: Path, src: Path, out: Path) -> str:
    args = ["scenarios", "import", "--from", "agentmediation", str(src), "--out", str(out)]
    result = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), *args])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def _old_library(tmp_path: Path, src: Path, edited: bool = False) -> Path:
    """A library as an import before stable ids left it: am-NNN files and a bare record."""
    out = tmp_path / "library"
    out.mkdir()
    record = ImportRecord(out)
    for i, s in enumerate(import_agentmediation(src).scenarios, start=1):
        path = out / f"am-{i:03d}.yaml"
        text = dump_scenario(s.model_copy(update={"id": f"am-{i:03d}"}), "yaml")
        path.write_text(text, encoding="utf-8")
        record.wrote(path, text)
        if edited and i == 1:
            path.write_text(text.replace("民间借贷", "民间借款"), encoding="utf-8")
    (out / RECORD_NAME).write_text(json.dumps(record.written), encoding="utf-8")
    return out


def test_importing_again_retires_old_positional_files_and_old_ids_still_resolve(
    tmp_path: Path,
) -> None:
    src = _jsonl(tmp_path / "cases.jsonl", [_record(A), _record(B)])
    library = _old_library(tmp_path, src)
    _import_cli(tmp_path, src, library)
    ids = _ids_by_title(src)
    assert sorted(p.name for p in library.glob("*.yaml")) == sorted(
        f"{i}.yaml" for i in ids.values()
    )
    record = json.loads((library / RECORD_NAME).read_text(encoding="utf-8"))
    assert record["ids"] == {"am-001": ids[A], "am-002": ids[B]}
    assert resolve_scenario("am-002", library).id == ids[B]


def test_an_old_file_edited_since_is_kept_and_named(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "cases.jsonl", [_record(A), _record(B)])
    library = _old_library(tmp_path, src, edited=True)
    out = _import_cli(tmp_path, src, library)
    assert "kept 1 file(s) under old line-number ids" in out and "am-001.yaml" in out
    assert (library / "am-001.yaml").is_file() and not (library / "am-002.yaml").exists()


def test_a_record_written_before_ids_existed_still_reads(tmp_path: Path) -> None:
    (tmp_path / RECORD_NAME).write_text(json.dumps({"am-001.yaml": "ab" * 32}), encoding="utf-8")
    record = ImportRecord(tmp_path)
    assert record.written == {"am-001.yaml": "ab" * 32} and record.ids == {}
    record.renamed("am-001", "am-1a2b3c4d")
    record.save()
    again = ImportRecord(tmp_path)
    assert again.written == record.written and again.current_id("am-001") == "am-1a2b3c4d"


@pytest.mark.slow  # imports every real case twice
@pytest.mark.data("agentmediation")
def test_the_real_cases_keep_their_ids_inside_a_reordered_superset(tmp_path: Path) -> None:
    # The full public repository holds the subset's cases and others between them: a
    # reordered copy with new cases interleaved stands for it here.
    real = AGENTMEDIATION_CASES.read_text(encoding="utf-8").splitlines()
    lines = [line for line in real if line.strip()]
    random.Random(7).shuffle(lines)
    extra = [
        json.dumps(_record(f"新增{i}号与某公司合同纠纷调解案"), ensure_ascii=False)
        for i in range(22)
    ]
    superset = [x for pair in zip(lines, extra, strict=False) for x in pair] + lines[len(extra) :]
    before = _ids_by_title(AGENTMEDIATION_CASES)
    after = _ids_by_title(_write(tmp_path / "case_back.json", superset))
    assert len(after) == len(before) + len(extra)
    assert sorted(after[t] for t in before) == sorted(before.values())
    assert {t: after[t] for t in before} == before
