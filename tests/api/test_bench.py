"""`disputelab.api.bench`: LLM-agent episodes against a local load target, measured."""

from __future__ import annotations

import pytest

from disputelab import api
from disputelab.api import bench

FAST = bench.TargetSettings(latency_s=0.01, retry_after_s=0.01)


def test_check_protocol_refuses_an_unknown_protocol_or_parameters_that_do_not_fit() -> None:
    assert bench.check_protocol("roundtable", {"budget": "4"}) == "roundtable"
    with pytest.raises(api.CatalogError, match="unknown protocol 'nope'"):
        bench.check_protocol("nope", {})
    with pytest.raises(api.ParamsError):
        bench.check_protocol("roundtable", {"no_such_parameter": "1"})


def test_run_bench_measures_episodes_against_the_bound_the_target_allows() -> None:
    r = bench.run_bench(episodes=2, concurrency=2, params={"budget": 2}, target=FAST, warm_up=0)
    assert r.episodes == 2 and r.failed_episodes == 0
    assert r.calls == r.requests > 0
    assert r.ideal_s > 0 and r.efficiency == pytest.approx(r.ideal_s / r.span_s)
    assert r.settings["protocol"] == "roundtable" and r.settings["scenario"] == "tenancy"


def test_run_bench_refuses_a_mediator_the_protocol_has_not_in_one_line() -> None:
    with pytest.raises(bench.BenchError) as caught:
        bench.run_bench(episodes=1, concurrency=1, mediator="nope", target=FAST, warm_up=0)
    assert "\n" not in str(caught.value) and "nope" in str(caught.value)
