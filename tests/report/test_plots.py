"""The consensus-gain shift plot's legend names what its colours mean: the axes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

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
