"""Every example ships working: each spec in examples/ runs, as the README runs it, with
`--limit-scenarios 1 --replicates 1` and rule agents (so offline and quick); a missing
prerequisite (a saved exemplar set, a corpus) fails the dry run before anything is
played, and so fails this test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SPECS = sorted(EXAMPLES.glob("*.yaml"))
# The README's commands that come before a spec, with small sizes: what it needs saved.
BEFORE: dict[str, list[list[str]]] = {
    "bilateral-remediation.yaml": [
        ["exemplars", "select", "--name", "vi", "--candidates", "6", "--rollouts", "1"]
    ],
}
QUICK = ["--limit-scenarios", "1", "--replicates", "1"]
# The expertise example retrieves from the other cases of the spec, and the limit applies
# to those too: one case alone has nothing to retrieve.
LIMITS = {"legal-expertise.yaml": ["--limit-scenarios", "2", "--replicates", "1"]}


def _agentmediation_case(name: str, articles: list[str]) -> dict[str, object]:
    """One case in the AgentMediation dataset's own layout, as `datasets get` lays it out
    (the legal examples read the dataset; the test cannot fetch it, being offline)."""
    return {
        "name": f"{name}与某装修公司装饰装修合同纠纷调解案.pdf",
        "basic_back": f"{name}委托某装修公司装修住房，完工后发现墙面开裂，{name}诉至法院要求返工。",
        "players": [name, "装修公司法定代表人"],
        "player_number": 2,
        "point": "装修公司的施工是否构成违约。",
        "article": articles,  # different per case: each retrieves the other's
        "fact": {"facts": [{"来源": "现场勘验", "内容": "客厅墙面有三处裂缝。"}]},
        "retrieve_articles": articles[:1],
    }


@pytest.fixture(autouse=True)
def _fetched_datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A data folder holding a two-case AgentMediation dataset, as if fetched."""
    folder = tmp_path / "data" / "agentmediation"
    folder.mkdir(parents=True)
    code = "《中华人民共和国民法典》"
    cases = [
        _agentmediation_case("张某", [f"{code}第577条", f"{code}第509条"]),
        _agentmediation_case("李某", [f"{code}第583条", f"{code}第510条"]),
    ]
    text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)
    (folder / "cases.jsonl").write_text(text, encoding="utf-8")
    monkeypatch.setenv("DISPUTELAB_DATA", str(tmp_path / "data"))


def _cli(store: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--store", str(store), *args])
    return result.exit_code, result.output + (result.stderr if result.stderr_bytes else "")


def test_every_file_in_examples_is_run_by_a_test() -> None:
    """A new example needs a place here (specs are found by this test itself)."""
    others = {p.name for p in EXAMPLES.iterdir()} - {p.name for p in SPECS}
    # python_api.py: tests/examples; the seeds: tests/curation, tests/api, tests/cli
    assert others == {"python_api.py", "curation-seeds", "curation-checks"}
    assert SPECS


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_the_example_runs_as_shipped(spec: Path, tmp_path: Path) -> None:
    store = tmp_path / "runs"
    for command in BEFORE.get(spec.name, []):
        code, output = _cli(store, *command)
        assert code == 0, output
    quick = LIMITS.get(spec.name, QUICK)
    code, output = _cli(store, "experiment", str(spec), "--dry-run", *quick)
    assert code == 0, output
    code, output = _cli(store, "experiment", str(spec), *quick)
    assert code == 0, output
    assert " 0 failed" in " ".join(output.split())


def test_a_broken_example_fails_its_dry_run_with_the_missing_prerequisite(
    tmp_path: Path,
) -> None:
    """The remediation example without the README's `exemplars select` step first: the
    dry run names the missing set (it used to pass, and the run failed at the end)."""
    spec = EXAMPLES / "bilateral-remediation.yaml"
    code, output = _cli(tmp_path / "runs", "experiment", str(spec), "--dry-run", *QUICK)
    assert code == 2
    assert "exemplars: no exemplars named 'vi'" in " ".join(output.split())


def test_a_spec_naming_a_corpus_that_is_not_there_fails_its_dry_run(tmp_path: Path) -> None:
    spec = tmp_path / "broken.yaml"
    text = (EXAMPLES / "legal-expertise.yaml").read_text(encoding="utf-8")
    spec.write_text(text + "corpus: statutes-that-are-not-there.jsonl\n", encoding="utf-8")
    code, output = _cli(tmp_path / "runs", "experiment", str(spec), "--dry-run", *QUICK)
    assert code == 2
    assert "corpus: no file" in " ".join(output.split())
