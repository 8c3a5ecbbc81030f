"""The bench: LLM-agent episodes against a local OpenAI-compatible load target (no
network), measured against the bound the endpoint allows and for what each call costs.

    from disputelab.api import bench

    result = bench.run_bench(episodes=50, concurrency=16, target=bench.TargetSettings(0.05))
    print(result.efficiency, result.cpu_ms_per_call)

The runner and its statistics are imported only when a bench runs: they bring scipy and
statsmodels, seconds of start-up that nothing else here needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from disputelab.api._lazy import lazy_attribute
from disputelab.errors import DisputelabError
from disputelab.llm.load_settings import LatencyShape, TargetSettings
from disputelab.protocols.base import DEFAULT_PROTOCOL

if TYPE_CHECKING:
    from disputelab.experiments.bench import BenchResult

__all__ = [
    "BenchError",
    "BenchResult",
    "LatencyShape",
    "TargetSettings",
    "check_protocol",
    "run_bench",
]

_LAZY = {"BenchResult": "disputelab.experiments.bench"}  # the runner: scipy, statsmodels


def __getattr__(name: str) -> Any:
    return lazy_attribute(globals(), _LAZY, name)


class BenchError(DisputelabError, ValueError):
    """A bench the runner refuses (an unknown mediator kind, a scenario the protocol
    cannot play), in one line."""


def check_protocol(name: str, params: Mapping[str, Any]) -> str:
    """The protocol's name, once it and its parameters are known to fit (before a load
    target starts): CatalogError for an unknown protocol, ParamsError for parameters
    that do not fit it."""
    from disputelab.api.catalog import describe_protocol
    from disputelab.protocols.base import get_protocol

    describe_protocol(name)  # the unknown name, with those there are
    get_protocol(name).params(params)
    return name


def run_bench(
    *,
    protocol: str = DEFAULT_PROTOCOL,
    scenario: str = "tenancy",
    episodes: int = 200,
    concurrency: int = 64,
    mediator: str | None = None,
    params: Mapping[str, Any] | None = None,
    target: TargetSettings | None = None,
    raw_sdk_calls: int = 0,
    workers: int = 0,
    timeout_s: float | None = None,
    warm_up: int = 4,
) -> BenchResult:
    """Warm up, then run `episodes` of `protocol` on the built-in `scenario` with LLM
    agents against a load target behaving as `target` says, `concurrency` in flight (in
    `workers` processes, 0 for this one), and measure them; `raw_sdk_calls` replays that
    many calls through the bare openai SDK as a baseline, and `warm_up` episodes are
    played first, unmeasured. BenchError when the runner refuses the settings."""
    from pydantic import ValidationError

    from disputelab.experiments.bench import BenchSettings
    from disputelab.experiments.bench import run_bench as run
    from disputelab.scenario.io import describe_validation_error

    settings = BenchSettings(
        protocol=protocol,
        scenario=scenario,
        episodes=episodes,
        concurrency=concurrency,
        mediator=mediator,
        params=dict(params or {}),
        target=target or TargetSettings(),
        raw_sdk_calls=raw_sdk_calls,
        workers=workers,
        timeout_s=timeout_s,
        warm_up=warm_up,
    )
    try:
        return run(settings)
    except ValidationError as exc:  # a spec the runner refuses (unknown mediator, ...)
        raise BenchError("; ".join(describe_validation_error(exc))) from None
    except DisputelabError:
        raise
    except ValueError as exc:  # a scenario the protocol cannot play
        raise BenchError(str(exc).splitlines()[0].strip()) from None
