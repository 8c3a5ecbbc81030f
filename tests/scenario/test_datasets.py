"""`disputelab datasets get` fetches a public dataset with git and lays it out for the
importers; specs then name it as `agentmediation:`. The tests fetch from a bare git
repository built here from the shared copy of the real files, never from the network."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from tests.helpers import AGENTMEDIATION, PROMEDIATE

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _bare_repository(tmp_path: Path, files: dict[str, Path], lines: int | None = None) -> str:
    """A bare repository holding `files` (path in repository -> source), as a file URL."""
    work = tmp_path / "work"
    for inside, src in files.items():
        dest = work / inside
        dest.parent.mkdir(parents=True, exist_ok=True)
        text = src.read_text(encoding="utf-8")
        if lines is not None and src.suffix == ".jsonl":
            text = "\n".join(text.splitlines()[:lines]) + "\n"
        dest.write_text(text, encoding="utf-8")
    _git("init", "-q", "-b", "main", cwd=work)
    _git("add", ".", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "data", cwd=work)
    bare = tmp_path / "mirror.git"
    _git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    return bare.as_uri()


def _cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--store", str(tmp_path / "store"), *args])
    return result.exit_code, " ".join(result.output.split())


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "data"
    monkeypatch.setenv("DISPUTELAB_DATA", str(root))
    return root


def test_a_spec_names_a_dataset_that_is_not_fetched_yet(tmp_path: Path, data: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text('name: legal\nprotocol: staged\nscenarios: ["agentmediation:"]\n')
    code, out = _cli(tmp_path, "experiment", str(spec))
    assert code == 2
    assert "dataset agentmediation is not fetched yet; fetch it (`disputelab datasets get" in out


@pytest.mark.data("agentmediation")
def test_get_agentmediation_then_run_a_spec_on_it(tmp_path: Path, data: Path) -> None:
    am = AGENTMEDIATION
    url = _bare_repository(
        tmp_path,
        {"data/case_back.json": am / "cases.jsonl", "data/data_resource.json": am / "raw.jsonl"},
        lines=6,
    )
    code, out = _cli(tmp_path, "datasets", "get", "agentmediation", "--from", url)
    assert code == 0, out
    assert "fetched agentmediation" in out and "licence:" in out and "cite: Chen et al." in out
    assert (data / "agentmediation" / "cases.jsonl").is_file()
    assert (data / "agentmediation" / "raw.jsonl").is_file()
    code, out = _cli(tmp_path, "datasets", "list")
    assert code == 0 and str(data / "agentmediation") in out
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        'name: legal\nprotocol: staged\nscenarios: ["agentmediation:"]\nreplicates: 1\n'
    )
    code, out = _cli(tmp_path, "experiment", str(spec), "--limit-scenarios", "5")
    assert code == 0, out
    assert "5 episodes planned, 5 run" in out


@pytest.mark.data("promediate")
def test_get_promediate_lays_out_the_cases_with_their_topic_names(
    tmp_path: Path, data: Path
) -> None:
    pm = PROMEDIATE
    url = _bare_repository(
        tmp_path,
        {
            "cases/hmo.json": pm / "hmo.json",
            "cases/flagship.json": pm / "flagship.json",
            "thoughtful_agents/prompts/topics.json": pm / "topics.json",
            "LICENSE": pm / "LICENSE",
        },
    )
    code, out = _cli(tmp_path, "datasets", "get", "promediate", "--from", url)
    assert code == 0, out
    assert "2 case file(s)" in out and "MIT" in out
    spec = tmp_path / "spec.yaml"
    spec.write_text('name: pm\nscenarios: ["promediate:"]\nreplicates: 1\nbudget: 10\n')
    code, out = _cli(tmp_path, "experiment", str(spec))
    assert code == 0, out
    assert "4 episodes planned, 4 run" in out


def test_without_a_reachable_source_get_fails_in_one_line(tmp_path: Path, data: Path) -> None:
    missing = (tmp_path / "nowhere.git").as_uri()
    code, out = _cli(tmp_path, "datasets", "get", "agentmediation", "--from", missing)
    assert code == 2
    assert out.startswith("error: cannot fetch agentmediation from file://")
    assert "check the network, or pass --from (a mirror or a local clone)" in out


def test_a_plain_folder_given_as_the_source_is_named_as_one(tmp_path: Path, data: Path) -> None:
    # A downloaded copy of the cases is not a repository: say how to use it instead.
    folder = tmp_path / "downloaded"
    folder.mkdir()
    (folder / "flagship.json").write_text("{}")
    code, out = _cli(tmp_path, "datasets", "get", "promediate", "--from", str(folder))
    flat = " ".join(out.split())
    assert code == 2 and "is a folder but not a git clone" in flat, out
    assert "`disputelab scenarios import --from promediate" in flat, out
    assert not (data / "promediate").exists()  # nothing fetched, nothing laid out


@pytest.mark.data("agentmediation")
def test_a_bare_mirror_given_as_a_path_is_fetched_from(tmp_path: Path, data: Path) -> None:
    am = AGENTMEDIATION
    files = {"data/case_back.json": am / "cases.jsonl", "data/data_resource.json": am / "raw.jsonl"}
    _bare_repository(tmp_path, files, lines=3)
    path = str(tmp_path / "mirror.git")  # a path, not a URL: a bare repository has no .git
    code, out = _cli(tmp_path, "datasets", "get", "agentmediation", "--from", path)
    assert code == 0, out
    assert (data / "agentmediation" / "cases.jsonl").is_file()


@pytest.mark.data("agentmediation")
def test_a_failed_fetch_keeps_the_dataset_fetched_before(tmp_path: Path, data: Path) -> None:
    am = AGENTMEDIATION
    url = _bare_repository(
        tmp_path,
        {"data/case_back.json": am / "cases.jsonl", "data/data_resource.json": am / "raw.jsonl"},
        lines=3,
    )
    assert _cli(tmp_path, "datasets", "get", "agentmediation", "--from", url)[0] == 0
    missing = (tmp_path / "nowhere.git").as_uri()
    assert _cli(tmp_path, "datasets", "get", "agentmediation", "--from", missing)[0] == 2
    assert (data / "agentmediation" / "repository" / "data" / "case_back.json").is_file()
    assert (data / "agentmediation" / "cases.jsonl").is_file()
