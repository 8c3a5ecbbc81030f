"""The report charts consensus from whichever tracker the run used, named on each chart,
and a negotiation over amounts gets its price path instead of an empty section."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.report.html import run_html
from disputelab.store.sqlite import Store
from tests.report.pages import cli, embedded


def _stub(body: dict[str, Any]) -> Scripted:
    return Scripted(content=json.dumps(fill(requested_schema(body), text="Half each?")))


def test_an_llm_party_run_charts_its_self_report_trajectory(tmp_path: Path) -> None:
    spec = tmp_path / "llm.yaml"
    with fake_openai(_stub) as server:
        spec.write_text(
            "name: llm\nscenarios: [tenancy]\nparties: llm\nmediators: [rule]\n"
            f"models: {{parties: 'openai:m@{server.url}'}}\nreplicates: 2\nbudget: 4\n"
        )
        cli(tmp_path / "runs", "experiment", str(spec))
    store = Store(tmp_path / "runs")
    meta = embedded(run_html(store, "llm"), "report-meta")
    store.close()
    [scenario] = meta["topics"]
    assert scenario["tracker"] == "self-report"  # no oracle: LLM parties have no hidden state
    arms = {arm[0]: arm for arm in scenario["arms"]}
    assert set(arms) == {"unmediated", "mediator: rule"}
    curves = arms["mediator: rule"][2]
    assert len(curves) == len(scenario["topics"]) and all(len(c) >= 2 for c in curves)


def test_a_rule_run_still_charts_the_oracle(tmp_path: Path) -> None:
    cli(tmp_path / "runs", "run", "tenancy", "--budget", "4")
    store = Store(tmp_path / "runs")
    [run] = store.runs()
    meta = embedded(run_html(store, run["run_id"]), "report-meta")
    store.close()
    assert [sc["tracker"] for sc in meta["topics"]] == ["oracle"]


def test_a_bilateral_run_shows_each_partys_offers(tmp_path: Path) -> None:
    cli(tmp_path / "runs", "run", "product-sale", "--protocol", "bilateral", "--seed", "3")
    store = Store(tmp_path / "runs")
    [run] = store.runs()
    meta = embedded(run_html(store, run["run_id"]), "report-meta")
    store.close()
    assert meta["topics"] == []
    [scenario] = meta["offers"]
    assert scenario["terms"] and scenario["terms"][0][0] == "price"
    paths = [s[2][0] for s in scenario["series"]]
    assert len(paths) == 2 and all(len(p) >= 2 for p in paths)  # the seller and the buyer
    seller, buyer = sorted(paths, key=lambda p: -p[0])
    assert seller[0] > buyer[0]  # the seller opens above the buyer
