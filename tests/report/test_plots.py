"""The experiment plots: the consensus-gain shift plot's legend names what its colours
mean (the axes), and a protocol that tracks no consensus gets no plot, not a blank one."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.experiments.runner import run_experiment
from disputelab.experiments.spec import ExperimentSpec
from disputelab.llm.models import ModelHub
from disputelab.report import plots
from disputelab.store.sqlite import Store


def test_the_gain_shift_legend_has_one_swatch_per_axis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path)
    conditions = ["general", "posture:competing", "culture:US-CN", "culture:US-KR"]
    spec = ExperimentSpec(name="g", scenarios=["tenancy"], conditions=conditions, replicates=2)
    asyncio.run(run_experiment(store, spec, tmp_path, ModelHub(None)))
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
    asyncio.run(run_experiment(store, spec, tmp_path, ModelHub(None)))
    assert plots.experiment_figures(store, "deals", ["general"]) == []
    store.close()
    folder = tmp_path / "plots"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "no artists with labels" among them
        r = CliRunner().invoke(
            app, ["--store", str(tmp_path / "s"), "report", "deals", "--plots", str(folder)]
        )
    assert r.exit_code == 2
    assert "no plots for deals: its bilateral episodes track no consensus" in r.stderr
    assert not folder.exists()


def test_a_roundtable_experiment_still_gets_its_trajectories(tmp_path: Path) -> None:
    store = Store(tmp_path)
    spec = ExperimentSpec(name="g", scenarios=["tenancy"], replicates=1, budget=12)
    asyncio.run(run_experiment(store, spec, tmp_path, ModelHub(None)))
    names = [name for name, fig in plots.experiment_figures(store, "g", ["general"])]
    plt.close("all")
    assert names == ["trajectories"]
