"""The peer benchmarks (benchmarks/bench_peer_*.py): their patch step refuses a folder that
is not the peer and never writes to the clone, the stub answers each peer the way its code
parses replies, and disputelab's side of each script runs against the stub. Nothing here
times anything: the figures are the scripts' own business."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from disputelab.llm.load_settings import TargetSettings
from tests.data_location import expected_folder

CLONE = Path(__file__).resolve().parents[2]
BENCHMARKS = CLONE / "benchmarks"
SCRIPTS = {
    "agentmediation": "bench_peer_agentmediation.py",
    "promediate": "bench_peer_promediate.py",
}


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, ModuleType]]:
    """The scripts' modules, imported as the scripts import one another."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import bench_peer_agentmediation
    import bench_peer_promediate
    import peer_patch
    import peer_stub

    yield {
        "agentmediation": bench_peer_agentmediation,
        "promediate": bench_peer_promediate,
        "patch": peer_patch,
        "stub": peer_stub,
    }


def run_script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(CLONE)}
    command = [sys.executable, str(BENCHMARKS / SCRIPTS[name]), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_folder_that_is_not_the_peer_is_refused_in_one_line(name: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a clone of anything\n")
    done = run_script(name, "--peer", str(tmp_path), "--rounds", "1")
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_a_peer_that_moved_on_is_refused_naming_the_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "chat-no-key.py").write_text("client = make(url=SETTINGS.url)\n")
    done = run_script("agentmediation", "--peer", str(tmp_path), "--rounds", "1")
    assert done.returncode == 2
    assert "src/chat.py" in done.stderr and "base_url" in done.stderr


def test_patching_writes_only_to_the_copy(bench: dict[str, ModuleType], tmp_path: Path) -> None:
    clone = tmp_path / "AgentMediation"
    (clone / "src").mkdir(parents=True)
    files = {
        "src/chat-no-key.py": (
            'import httpx\nfrom zhipuai import ZhipuAI\nc = C(base_url="your_base_url")\n'
        ),
        "src/utils.py": (
            "from docx import Document\nfrom docx.shared import Pt\nfrom docx.oxml.ns import qn\n"
        ),
        "src/agent.py": "x = f\"{'\\n'.join(lines)}\"\n",
        "src/mediator.py": "y = 1\n",
        "run.py": "rows = open('./data/case_back.json', 'r').readlines()\n",
    }
    for path, text in files.items():
        (clone / path).write_text(text)
    steps = bench["agentmediation"].peer_steps(8)
    copy = bench["patch"].patched_copy(clone, steps, tmp_path / "work")
    assert {p: (clone / p).read_text() for p in files} == files
    assert not (clone / "src" / "chat.py").exists()
    assert "[:8]" in (copy / "run.py").read_text()
    assert 'environ["OPENAI_BASE_URL"]' in (copy / "src" / "chat.py").read_text()
    assert "chr(10).join(lines)" in (copy / "src" / "agent.py").read_text()
    for path in ("src/chat.py", "src/utils.py", "src/agent.py"):
        compile((copy / path).read_text(), path, "exec")  # what the steps wrote still parses


def test_the_agentmediation_stub_fills_a_fenced_example_with_its_last_choices(
    bench: dict[str, ModuleType],
) -> None:
    example = '{\n  "serious": "yes/no",\n  "why": "say why",\n  "plan": str\n}'
    prompt = f"Check it.\n```json\n{example}\n```\n"
    reply = bench["stub"].agentmediation_reply(prompt, 3)
    answer = json.loads(reply.removeprefix("```json\n").removesuffix("\n```"))
    assert answer["serious"] == "no"
    assert set(answer) == {"serious", "why", "plan"}
    assert "```" not in bench["stub"].agentmediation_reply("Say your opening words.", 3)


def test_the_promediate_stub_answers_the_keys_each_prompt_names(
    bench: dict[str, ModuleType],
) -> None:
    reply = bench["stub"].promediate_reply
    assert len(json.loads(reply('reply as {"thoughts": [...]}', 1))["thoughts"]) == 2
    assert json.loads(reply('give {"reasoning": "", "rating": 3.0}', 1))["rating"] == 5.0
    assert "articulation" in json.loads(reply('{"articulation": "text"}', 1))
    assert reply('Name the next speaker, or "anyone".', 1) == "anyone"
    assert not reply("Interpret this line.", 1).startswith("{")


def test_disputelabs_self_checks_pass_as_the_peers_do(bench: dict[str, ModuleType]) -> None:
    check = {
        "type": "object",
        "properties": {"serious_problem": {"type": "boolean"}, "revised": {"type": "string"}},
        "required": ["serious_problem", "revised"],
    }
    body = {
        "messages": [{"role": "user", "content": "Check your line."}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "self_check", "schema": check},
        },
    }
    target = bench["stub"].PeerTarget(TargetSettings(), "agentmediation")
    assert json.loads(target.content(body, 1)) == {"serious_problem": False, "revised": ""}
    other = {
        **body,
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "move",
                "schema": {
                    "type": "object",
                    "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"],
                },
            },
        },
    }
    assert json.loads(target.content(other, 1)) == {"ok": True}  # other booleans as filled


@pytest.mark.data("agentmediation")
def test_disputelabs_agentmediation_side_runs_against_the_stub() -> None:
    cases = expected_folder("agentmediation") / "cases.jsonl"
    done = run_script("agentmediation", "--quick", "--cases-file", str(cases), "--latency", "0")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("disputelab"))
    assert int(row.split()[-2]) > 0  # it called the stub


@pytest.mark.data("promediate")
def test_disputelabs_promediate_side_runs_against_the_stub() -> None:
    case = expected_folder("promediate") / "hmo.json"
    args = ("--quick", "--case-file", str(case), "--turns", "2", "--latency", "0")
    done = run_script("promediate", *args)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("disputelab"))
    assert int(row.split()[-2]) > 0
