"""A trial on a few cases retrieves legal bases from every case the spec names, so that
`--limit-scenarios` shrinks the grid and never the corpus the expertise condition uses."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.legal.expertise import retrieved_bases
from disputelab.plan.experiment import plan_experiment
from disputelab.scenario.conditions import apply_condition

# Three cases, each citing articles of its own: with its own bases left out of its
# retrieval, the first case can retrieve only from the other two.
CODE = "《中华人民共和国民法典》"
CASES = [
    ("张某", "装饰装修合同", [f"{CODE}第577条"]),
    ("李某", "房屋租赁合同", [f"{CODE}第703条", f"{CODE}第577条"]),
    ("王某", "物业服务合同", [f"{CODE}第937条", f"{CODE}第944条"]),
]


def _cases(tmp_path: Path) -> Path:
    lines = []
    for name, kind, articles in CASES:
        record = {
            "name": f"{name}与某公司{kind}纠纷调解案.pdf",
            "basic_back": f"{name}与某公司因{kind}发生纠纷，{name}诉至法院。",
            "players": [name, "某公司法定代表人"],
            "player_number": 2,
            "point": f"某公司履行{kind}的行为是否构成违约。",
            "article": articles,
            "fact": {"facts": [{"来源": "当事人陈述", "内容": f"双方对{kind}的履行有争议。"}]},
        }
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(lines), "utf-8")
    return path


def _spec(tmp_path: Path, limit: int | None) -> dict[str, object]:
    spec: dict[str, object] = {
        "name": "trial",
        "protocol": "staged",
        "scenarios": [f"agentmediation:{_cases(tmp_path)}"],
        "conditions": ["expertise:ek-top3"],
        "rounds": 2,
    }
    if limit is not None:
        spec["limit_scenarios"] = limit
    return spec


def test_a_limited_plan_keeps_every_case_as_its_retrieval_pool(tmp_path: Path) -> None:
    plan = plan_experiment(_spec(tmp_path, limit=1), profiles={})
    assert len(plan.scenarios) == 1
    assert len(plan.retrieval_pool) == len(CASES)


def test_the_first_case_retrieves_the_same_bases_in_a_trial_and_in_the_full_run(
    tmp_path: Path,
) -> None:
    def first_cell_bases(limit: int | None) -> tuple[str, ...]:
        plan = plan_experiment(_spec(tmp_path, limit), profiles={})
        sid, scenario = next(iter(plan.scenarios.items()))
        cell = {(sid, "expertise:ek-top3"): apply_condition(scenario, "expertise:ek-top3")}
        return next(iter(retrieved_bases(None, dict(plan.retrieval_pool), cell).values()))

    assert first_cell_bases(limit=1) == first_cell_bases(limit=None)
    assert first_cell_bases(limit=1)  # the other cases' bases, never empty


def test_a_one_case_trial_of_the_expertise_condition_runs(tmp_path: Path) -> None:
    spec = tmp_path / "trial.json"
    spec.write_text(json.dumps(_spec(tmp_path, limit=None), ensure_ascii=False), "utf-8")
    result = CliRunner().invoke(
        app,
        ["--store", str(tmp_path / "runs"), "experiment", str(spec), "--limit-scenarios", "1"],
    )
    assert result.exit_code == 0, result.output
    planned = len(plan_experiment(_spec(tmp_path, limit=1), profiles={}).episodes)
    assert f"{planned} episodes planned, {planned} run, 0 already done, 0 failed" in " ".join(
        result.output.split()
    )
