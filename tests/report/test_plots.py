"""The experiment plots: the consensus-gain shift plot's legend names what its colours
mean (the axes), and a protocol that tracks no consensus gets no plot, not a blank one."""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.report import plots
from disputelab.store.sqlite import Store


def test_the_gain_shift_legend_has_one_swatch_per_axis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path)
    conditions = ["general", "posture:competing", "culture:US-CN", "culture:US-KR"]
    spec = ExperimentSpec(name="g", scenarios=["tenancy"], conditions=conditions, replicates=2)
    asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), ModelHub(None)))
    kept: list[plt.Figure] = []
    monkeypatch.setattr(plots.plt, "close", kept.append)  # keep the figure to read it
    path = plots.gain_shift_png(store, "g", conditions, tmp_path / "shift.png")
    assert path.is_file()
    (fig,) = kept
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["posture", "culture"]
    plt.close(fig)


def test_a_protocol_without_consensus_gets_no_blank_plot_but_one_line(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    spec = ExperimentSpec(
        name="deals",
        protocol="bilateral",
        scenarios=["product-sale"],
        mediators=["none", "remediator"],
        replicates=1,
    )
    asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), ModelHub(None)))
    assert plots.experiment_figures(store, "deals", ["general"]) == []
    store.close()
    folder = tmp_path / "plots"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "no artists with labels" among them
        r = CliRunner().invoke(
            app, ["--store", str(tmp_path / "s"), "report", "deals", "--plots", str(folder)]
        )
    assert r.exit_code == 2
    line = " ".join(r.stderr.split())
    assert "no plots for deals: every plot draws oracle consensus over topics" in line
    assert "(2 episodes, bilateral)" in line
    assert not folder.exists()


def test_llm_parties_get_no_blank_plot_and_are_told_the_oracle_needs_rule_parties(
    tmp_path: Path,
) -> None:
    # A roundtable draws trajectories, but only from hidden stances: LLM parties have none.
    def scripted(body: dict[str, Any]) -> Scripted:
        reply = fill(requested_schema(body), text="Fine.")
        if "signal" in reply:
            reply["signal"] = "continue"
        return Scripted(content=json.dumps(reply))

    store = Store(tmp_path / "s")
    with fake_openai(scripted) as server:
        model = f"openai:m@{server.url}"
        spec = ExperimentSpec(
            name="talk",
            scenarios=["tenancy"],
            parties="llm",
            models={"parties": model, "mediator": model},
            replicates=1,
            budget=4,
        )
        summary = asyncio.run(
            run_experiment(store, plan_experiment(spec, base=tmp_path), ModelHub(None))
        )
    assert summary.failed == 0, summary.errors
    store.close()
    folder = tmp_path / "plots"
    r = CliRunner().invoke(
        app, ["--store", str(tmp_path / "s"), "report", "talk", "--plots", str(folder)]
    )
    assert r.exit_code == 2
    line = " ".join(r.stderr.split())
    assert "none of its complete episodes has it (2 episodes, roundtable)" in line
    assert "that takes rule parties" in line
    assert not folder.exists()


def test_a_roundtable_experiment_still_gets_its_trajectories(tmp_path: Path) -> None:
    store = Store(tmp_path)
    spec = ExperimentSpec(name="g", scenarios=["tenancy"], replicates=1, budget=12)
    asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), ModelHub(None)))
    names = [name for name, fig in plots.experiment_figures(store, "g", ["general"])]
    plt.close("all")
    assert names == ["trajectories"]
