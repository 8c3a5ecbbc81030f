"""Ctrl-C during the scoring pass after play stops the scoring, exits 130 and says what
is unscored and the command that scores it. The scoring is slow for real: a judge model
on a local server that takes its time to answer, so the signal lands while it scores."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from disputelab.llm.testing import Scripted, fake_openai, fill
from tests.helpers import WAIT_S

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from disputelab.cli import main; main()"]


def test_an_interrupt_while_judges_score_exits_130_and_names_what_is_unscored(
    tmp_path: Path,
) -> None:
    judging = threading.Event()

    def slow_judge(body: dict[str, object]) -> Scripted:
        judging.set()
        fmt = body.get("response_format") or {}
        assert isinstance(fmt, dict)
        schema = (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
        return Scripted(content=json.dumps(fill(schema, text="r")), delay_s=5.0)

    with fake_openai(slow_judge) as server:
        spec = tmp_path / "spec.yaml"
        spec.write_text(
            "name: judged\nscenarios: [tenancy, workplace]\nmediators: [rule]\n"
            f"replicates: 2\nbudget: 20\nevaluators: [outcome-judges]\n"
            f"models:\n  judge: 'openai:j@{server.url}'\n",
            encoding="utf-8",
        )
        store = tmp_path / "store"
        proc = subprocess.Popen(
            [*CLI, "--store", str(store), "experiment", str(spec)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + WAIT_S
        while not judging.wait(0.1):
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the judge was never asked"
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 130, err
    assert "Traceback" not in out + err
    said = " ".join(err.split())
    assert "interrupted while scoring" in said and "evaluator outcome-judges" in said
    line = next(x for x in err.splitlines() if x.startswith("score them with: "))
    command = shlex.split(line.removeprefix("score them with: "))
    assert command == ["disputelab", "--store", str(store), "experiment", str(spec), "--resume"]
    assert "evaluate judged --evaluator outcome-judges" in said
