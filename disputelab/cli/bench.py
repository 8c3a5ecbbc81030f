"""`disputelab bench`: run LLM-agent episodes against a local load target and report how
close the run comes to the endpoint's bound, and what each call costs here.

The bench module is imported when the command runs: the runner brings scipy and
statsmodels, seconds of start-up that every other command would pay."""

from __future__ import annotations

import math
import platform
from typing import TYPE_CHECKING, Annotated, Any, cast, get_args

import typer

from disputelab.api import DEFAULT_PROTOCOL, ParamsError, catalog
from disputelab.api.bench import LatencyShape, TargetSettings, check_protocol
from disputelab.cli.common import fail, out, state
from disputelab.cli.params import parse_pairs
from disputelab.errors import DisputelabError

if TYPE_CHECKING:
    from disputelab.api.bench import BenchResult


# Bounded: an endless latency (inf) would run the bench for ever and then report NaN.
Latency = Annotated[
    float, typer.Option(min=0.0, max=60.0, help="Target latency in seconds (at most 60).")
]
Hang = Annotated[
    float, typer.Option(min=0.0, max=600.0, help="Seconds a hanging reply takes (at most 600).")
]


def bench(
    protocol: Annotated[str, typer.Option(help="Protocol the episodes play.")] = DEFAULT_PROTOCOL,
    scenario: Annotated[str, typer.Option(help="Built-in scenario id.")] = "tenancy",
    episodes: Annotated[int, typer.Option(min=1, max=100_000, help="Episodes measured.")] = 200,
    concurrency: Annotated[int, typer.Option(min=1, max=4096, help="Episodes in flight.")] = 64,
    mediator: Annotated[
        str | None, typer.Option(help="Mediator kind (default: the protocol's LLM one).")
    ] = None,
    param: Annotated[
        list[str] | None, typer.Option(help="A protocol parameter: KEY=VALUE.")
    ] = None,
    latency: Latency = 0.2,
    latency_shape: Annotated[
        str, typer.Option(help="fixed, uniform (0 to 2L) or exponential (mean L).")
    ] = "fixed",
    fault: Annotated[
        list[str] | None,
        typer.Option(help="KIND=RATE, a share of replies that fail: 429, 500, timeout, malformed."),
    ] = None,
    hang: Hang = 5.0,
    hidden_limit: Annotated[
        int | None, typer.Option(min=1, help="Calls the target serves at once; 429 past it.")
    ] = None,
    workers: Annotated[
        int, typer.Option(min=0, max=64, help="Worker processes (0: the runner's own loop).")
    ] = 0,
    raw_sdk: Annotated[
        int, typer.Option(min=0, help="Calls replayed through the bare openai SDK (0: skip).")
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Measure the runner against a local OpenAI-compatible load target (no network)."""
    rates = _rates(fault or [])
    target = _target(
        latency_shape, latency_s=latency, hang_s=hang, hidden_limit=hidden_limit, **rates
    )
    name, params = _protocol(protocol, param or [])
    ids = catalog.scenario_ids()
    if scenario not in ids:
        fail(f"--scenario {scenario!r}: not a built-in scenario; use {', '.join(ids)}")
    result = _measured(
        protocol=name,
        scenario=scenario,
        episodes=episodes,
        concurrency=concurrency,
        mediator=mediator,
        params=params,
        target=target,
        raw_sdk_calls=raw_sdk,
        workers=workers,
        timeout_s=state.timeout_s,
    )
    if as_json:
        out.print_json(result.to_json())
        return
    _print(result)


def _measured(**settings: Any) -> BenchResult:
    """The bench's result, or its refusal in one line."""
    from disputelab.api.bench import run_bench  # see the docstring

    try:
        return run_bench(**settings)
    except DisputelabError as exc:  # a spec the runner refuses (unknown mediator, ...)
        fail(str(exc).splitlines()[0].strip())


_FAULTS = ("429", "500", "timeout", "malformed")


def _rates(pairs: list[str]) -> dict[str, float]:
    """`--fault KIND=RATE` options as the target's rate settings."""
    rates: dict[str, float] = {}
    for kind, value in parse_pairs(pairs, "--fault").items():
        if kind not in _FAULTS:
            fail(f"--fault takes {', '.join(_FAULTS)}, not {kind!r}")
        try:
            rates[f"rate_{kind}"] = float(value)
        except ValueError:
            fail(f"--fault {kind} needs a rate from 0 to 1, not {value!r}")
    return rates


def _target(latency_shape: str, **values: Any) -> TargetSettings:
    try:
        return TargetSettings(latency_shape=_shape(latency_shape), **values)
    except ValueError as exc:
        fail(str(exc))


def _shape(value: str) -> LatencyShape:
    for shape in get_args(LatencyShape):
        if value == shape:
            return cast(LatencyShape, shape)
    raise ValueError(f"--latency-shape takes fixed, uniform or exponential, not {value!r}")


def _protocol(name: str, pairs: list[str]) -> tuple[str, dict[str, str]]:
    """The protocol and its parameters, checked before the load target starts."""
    try:
        catalog.describe_protocol(name)
    except DisputelabError as exc:  # unknown: the message lists the protocols there are
        fail(str(exc))
    params = parse_pairs(pairs)
    try:
        check_protocol(name, params)
    except ParamsError as exc:
        fail(f"--param {exc}")
    return name, params


def _print(r: BenchResult) -> None:
    s = r.settings
    t = s["target"]
    load = "" if r.load_average is None else f" (load average {r.load_average:.2f})"
    out.print(
        f"{platform.machine()}, {r.cpus} CPUs{load}, Python {platform.python_version()}; "
        f"{r.episodes} {s['protocol']} episodes of {s['scenario']}, C={s['concurrency']}, "
        f"L={t['latency_s'] * 1000:g} ms ({t['latency_shape']})",
        highlight=False,
    )
    rows = [
        ("span", f"{r.span_s:.2f} s (ideal {r.ideal_s:.2f} s)"),
        ("efficiency", f"{r.efficiency:.2f}"),
        ("calls", f"{r.calls} completed, {r.requests} requests, {r.calls_per_s:.1f} calls/s"),
        ("CPU per call", f"{r.cpu_ms_per_call:.2f} ms (whole stack)"),
        ("peak RSS", f"{r.peak_rss_mb:.0f} MB" + _workers_rss(r, s["workers"])),
        ("store per episode", f"{r.store_bytes_per_episode / 1024:.1f} KB"),
        ("prompt prefix reuse", f"{r.prefix_share:.1%} of prompt characters"),
        ("duplicate requests", f"{r.duplicate_share:.1%}"),
        ("faults injected", ", ".join(f"{k} {v}" for k, v in r.faults.items())),
        ("failed episodes", str(r.failed_episodes)),
    ]
    if r.target_cpu_s is not None:
        rows.append(("load target CPU", _target_cpu(r)))
    if r.raw_sdk_cpu_ms_per_call is not None and not math.isnan(r.raw_sdk_cpu_ms_per_call):
        rows.append(("raw SDK CPU per call", f"{r.raw_sdk_cpu_ms_per_call:.2f} ms (create)"))
    for name, value in rows:
        out.print(f"  {name:22s} {value}", highlight=False)


def _workers_rss(r: BenchResult, workers: int) -> str:
    if not workers:
        return ""
    if r.workers_peak_rss_mb is None:
        return " (driver); not every worker reported its peak"
    return f" (driver); workers' peaks sum to {r.workers_peak_rss_mb:.0f} MB"


def _target_cpu(r: BenchResult) -> str:
    """The target's CPU, and how busy it and the run kept this machine's CPUs: near 1,
    the machine rather than the endpoint bounded the run."""
    assert r.target_cpu_s is not None
    text = f"{r.target_cpu_s:.2f} s, on the run's machine"
    if r.span_s > 0 and r.cpus > 0 and not math.isnan(r.cpu_ms_per_call):
        busy = (r.cpu_ms_per_call * r.calls / 1000 + r.target_cpu_s) / (r.span_s * r.cpus)
        text += f"; with the run's, {busy:.0%} of {r.cpus} CPUs over the span"
    return text
