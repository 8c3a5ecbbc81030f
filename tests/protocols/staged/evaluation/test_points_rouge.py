"""`evaluate --evaluator points-rouge --rouge STYLE` re-scores a legal run's points of
contention in the chosen tokenisation, the paper's included, and stores each style apart."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.protocols.staged.evaluation.agentmediation import score_staged
from disputelab.scenario import load_scenario
from disputelab.store.sqlite import Store
from tests.helpers import AGENTMEDIATION_CASES

CASES = AGENTMEDIATION_CASES


def _cli(store: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["--store", str(store), *args])
    return r.exit_code, r.output


@pytest.mark.data("agentmediation")
def test_each_rouge_style_is_scored_and_stored_apart(tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    one.write_text(CASES.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    store = tmp_path / "runs"
    code, out = _cli(
        store, "scenarios", "import", "--from", "agentmediation", str(one), "--out", str(tmp_path)
    )
    assert code == 0, out
    (case,) = tmp_path.glob("am-*.yaml")
    code, out = _cli(store, "run", str(case), "--protocol", "staged", "--mediator", "rule")
    assert code == 0, out
    values = {}
    for style in ("char", "jieba", "paper"):
        code, out = _cli(store, "evaluate", "last", "--evaluator", "points-rouge", "--rouge", style)
        assert code == 0, out
        st = Store(store)
        (rec,) = [st.load_episode(e) for e in st.episode_ids(st.resolve_run("last"))]
        stored = [
            s
            for s in st.scores(rec.episode_id)
            if s.evaluator == f"points-rouge:{style}" and s.metric == "points_rouge_l"
        ]
        (score,) = stored
        want = score_staged(rec.episode, load_scenario(case), style)["points_rouge_l"]  # type: ignore[arg-type]
        assert math.isclose(score.value, want.value)
        values[style] = score.value
    assert len(set(values.values())) > 1  # the styles tokenise differently
    code, out = _cli(store, "evaluate", "last", "--evaluator", "points-rouge", "--rouge", "words")
    assert code == 2 and "unknown ROUGE-L style 'words'" in out
