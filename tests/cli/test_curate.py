"""`disputelab curate --recast rules`: offline curation from the command line, and the
scenarios it keeps played by `disputelab run` with rule agents."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli import assert_one_error_line, flat, invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def squash(text: str) -> str:
    """The text without its white space: rich wraps long paths anywhere."""
    return "".join(text.split())


def test_offline_curation_keeps_hard_seeds_and_says_why_it_drops_the_others(
    tmp_path: Path,
) -> None:
    out = tmp_path / "curated"
    seeds, checks = EXAMPLES / "curation-seeds", EXAMPLES / "curation-checks"
    hard = [seeds / "river-discharge.txt", seeds / "software-licence.txt"]
    result = invoke(
        tmp_path / "runs",
        "curate",
        *map(str, hard),
        str(seeds / "clinic-closure.txt"),
        str(checks),
        "--recast",
        "rules",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    said = squash(result.stdout)
    for kept in ("clinic-closure", "river-discharge", "software-licence"):
        line = f"kept {kept} -> {out / kept}.yaml (unmediated: budget, budget, budget)"
        assert squash(line) in said
    assert squash(f"3 kept, 2 rejected; log of rejections: {out / 'rejected.jsonl'}") in said
    assert "modeluse" not in said  # no model was asked anything
    complaints = flat(result.stderr)
    assert "rejected clinic-closure-again (duplicate): near-duplicate of seed" in complaints
    assert "rejected shared-workshop (filter): too easy: resolved without a mediator" in complaints
    logged = [json.loads(line) for line in (out / "rejected.jsonl").read_text().splitlines()]
    assert sorted(r["stage"] for r in logged) == ["duplicate", "filter"]
    played = invoke(tmp_path / "runs", "run", str(out / "river-discharge.yaml"), "--budget", "20")
    assert played.exit_code == 0, played.output
    assert "Paper mill and the fishing cooperative (river-discharge)" in flat(played.stdout)


def test_a_model_with_recast_rules_is_one_line_and_so_is_no_model_at_all(tmp_path: Path) -> None:
    seeds = str(EXAMPLES / "curation-seeds")
    out = tmp_path / "curated"
    both = invoke(tmp_path / "runs", "curate", seeds, "--recast", "rules", "--model", "local")
    assert_one_error_line(both, "--recast rules uses no model")
    neither = invoke(tmp_path / "runs", "curate", seeds, "--out", str(out))
    assert_one_error_line(neither, "--recast model needs a model", "--recast rules")
    assert not out.exists()


def test_curate_help_names_the_offline_recast() -> None:
    result = invoke(Path("unused"), "curate", "--help")
    assert result.exit_code == 0
    assert "--recast" in result.stdout and "rules" in result.stdout
