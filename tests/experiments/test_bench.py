"""`disputelab bench` runs real episodes against the load target and reports what it
measured; the numbers are checked for consistency, never against a time."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.experiments.bench import BenchSettings, ideal_span, run_bench
from disputelab.llm.load_target import TargetSettings


def test_the_ideal_span_is_bound_by_the_endpoint_or_by_the_longest_episode() -> None:
    # 8 episodes of 10 calls, 4 at once, 0.1 s a call: the endpoint's share rules.
    assert ideal_span([10] * 8, 0.1, 4) == pytest.approx(2.0)
    # One long episode cannot be shortened by concurrency.
    assert ideal_span([50, 2, 2], 0.1, 64) == pytest.approx(5.0)
    assert ideal_span([], 0.1, 4) == 0.0


def _tiny(**target: float) -> BenchSettings:
    return BenchSettings(
        episodes=4,
        concurrency=2,
        params={"budget": 2},
        target=TargetSettings(latency_s=0.01, retry_after_s=0.01, **target),  # type: ignore[arg-type]
        warm_up=1,
    )


def test_a_bench_counts_every_call_of_the_measured_run_only() -> None:
    r = run_bench(_tiny())
    assert r.failed_episodes == 0 and r.episodes == 4
    assert r.calls == r.requests > 0  # no faults: one request per completed call
    assert r.duplicate_share == 0.0
    assert 0 < r.prefix_share < 1
    assert r.ideal_s > 0 and r.efficiency == pytest.approx(r.ideal_s / r.span_s)
    assert r.cpu_ms_per_call > 0 and r.peak_rss_mb > 0 and r.store_bytes_per_episode > 0


def test_the_machine_the_run_shared_is_reported_with_the_targets_cpu() -> None:
    # The target answered every call of the measured run: it spent CPU on them.
    r = run_bench(_tiny())
    assert r.target_cpu_s is not None and r.target_cpu_s > 0
    assert r.cpus >= 1
    assert r.load_average is None or r.load_average >= 0


def test_the_table_says_how_busy_the_target_and_the_run_kept_the_cpus() -> None:
    args = "bench --episodes 2 --concurrency 2 --latency 0.01 --param budget=2"
    result = CliRunner().invoke(app, args.split())
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())  # as wrapped to any terminal's width
    assert "load target CPU" in text and "CPUs over the span" in text


def test_with_workers_their_peak_memory_is_reported_beside_the_drivers() -> None:
    alone = run_bench(_tiny())
    spread = run_bench(replace(_tiny(), workers=2))
    assert alone.workers_peak_rss_mb is None
    assert spread.failed_episodes == 0 and spread.workers_peak_rss_mb is not None
    assert spread.workers_peak_rss_mb > 0


def test_injected_faults_are_retried_and_counted() -> None:
    r = run_bench(_tiny(rate_429=0.2, rate_500=0.1))
    assert r.failed_episodes == 0
    assert r.faults["429"] + r.faults["500"] > 0
    assert r.requests == r.calls + r.faults["429"] + r.faults["500"]


def test_the_command_prints_one_json_object_with_the_headline_keys() -> None:
    args = "bench --json --episodes 2 --concurrency 2 --latency 0.01 --param budget=2"
    result = CliRunner().invoke(app, [*args.split(), "--raw-sdk", "8"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"efficiency", "cpu_ms_per_call", "peak_rss_mb", "calls_per_s"} <= set(data)
    assert data["raw_sdk_cpu_ms_per_call"] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fault", "429=0.7", "--fault", "500=0.7"], "fault rates must each be from 0 to 1"),
        (["--fault", "503=0.1"], "--fault takes 429, 500, timeout, malformed"),
        (["--param", "budgt=2"], "--param budgt: not a parameter"),
        (["--protocol", "nope"], "unknown protocol 'nope'"),
        (["--latency-shape", "gamma"], "--latency-shape takes fixed, uniform or exponential"),
        # An endless latency or hang would run for ever and then report NaN.
        (["--latency", "inf"], "--latency"),
        (["--hang", "inf"], "--hang"),
        (["--scenario", "nosuch"], "--scenario 'nosuch': not a built-in scenario; use "),
        # What the runner refuses is said, not only where pydantic documents it.
        (["--mediator", "bogus"], "unknown mediator bogus; the roundtable protocol takes"),
    ],
)
def test_bad_bench_options_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["bench", "--episodes", "1", "--latency", "0.01", *args])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert "errors.pydantic.dev" not in result.output


def test_a_protocol_whose_other_seat_is_not_a_mediator_can_be_benched() -> None:
    # Settlement's non-party seat is counsel: it gets the target's model too.
    args = "bench --json --protocol settlement --scenario settle-gym-slip --episodes 1"
    result = CliRunner().invoke(app, [*args.split(), "--concurrency", "1", "--latency", "0.01"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["failed_episodes"] == 0 and data["calls"] > 0
