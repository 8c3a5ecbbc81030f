"""A re-import killed while it writes leaves every scenario file (and the import record)
either as it was or as the new import made it: never empty or cut short, so the next
import does not mistake a half-written file for one edited since.

The kill is real and lands mid-write every time: the child runs under a limit on the size
of any file it writes (RLIMIT_FSIZE), and the kernel kills it (SIGXFSZ) at the first write
past the limit.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import WAIT_S

resource = pytest.importorskip("resource")  # POSIX only

ROOT = Path(__file__).resolve().parents[2]
# Python ignores SIGXFSZ from the start; the child puts the kernel's default (a kill) back.
CLI = [
    sys.executable,
    "-c",
    "import signal; signal.signal(signal.SIGXFSZ, signal.SIG_DFL);"
    "from disputelab.cli import main; main()",
]


def _case(i: int) -> dict[str, object]:
    return {
        "name": f"案例{i}与某装修公司装饰装修合同纠纷调解案.pdf",
        "basic_back": f"张某{i}委托某装修公司装修住房，完工后发现墙面开裂，"
        "双方就返工费用发生争议。",
        "players": ["装修公司法定代表人", f"张某{i}"],
        "player_number": 2,
        "point": "装修公司的施工是否构成违约。",
        "article": ["《中华人民共和国民法典》第577条"],
        "fact": {"facts": [{"来源": "现场勘验", "内容": f"客厅墙面有{i}处裂缝。"}]},
        "retrieve_articles": [],
    }


def _import(cases: Path, out: Path, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def cap() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    args = ["scenarios", "import", "--from", "agentmediation", str(cases), "--out", str(out)]
    return subprocess.run(
        [*CLI, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        preexec_fn=cap,
    )


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if not p.name.endswith(".tmp")}


def test_a_kill_in_the_middle_of_a_re_import_leaves_each_file_whole(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(_case(i)) + "\n" for i in range(7)), encoding="utf-8")
    out = tmp_path / "library"
    out.mkdir()
    first = _import(cases, out)
    assert first.returncode == 0, first.stderr
    before = _files(out)
    assert len([n for n in before if n.endswith(".yaml")]) == 7
    smallest = min(len(b) for b in before.values())
    killed = _import(cases, out, limit=smallest // 2)
    assert killed.returncode == -signal.SIGXFSZ, killed.stderr  # killed mid-write
    assert _files(out) == before  # each file is the old one, whole
    again = _import(cases, out)
    assert again.returncode == 0, again.stderr
    assert "edited since" not in again.stdout + again.stderr
    assert _files(out) == before
    assert not list(out.glob(".*.tmp"))  # the next import does not add leftovers
