"""The settings of `disputelab bench`'s load target, apart from its server: the driver
that starts the target needs them, but not aiohttp's server, whose import cost every
command line a tenth of a second."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LatencyShape = Literal["fixed", "uniform", "exponential"]


@dataclass(frozen=True)
class TargetSettings:
    """How the target behaves. Rates are probabilities per request, drawn in order."""

    latency_s: float = 0.2
    latency_shape: LatencyShape = "fixed"  # uniform: 0 to 2L; exponential: mean L
    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_timeout: float = 0.0
    rate_malformed: float = 0.0
    hang_s: float = 5.0  # how long a "timeout" reply keeps the client waiting
    retry_after_s: float = 0.1
    hidden_limit: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        rates = (self.rate_429, self.rate_500, self.rate_timeout, self.rate_malformed)
        if any(not 0 <= r <= 1 for r in rates) or sum(rates) > 1:
            raise ValueError("fault rates must each be from 0 to 1, and sum to at most 1")
        times = (self.latency_s, self.hang_s, self.retry_after_s)
        if any(not 0 <= t < float("inf") for t in times):  # NaN fails too
            raise ValueError("latency, hang and Retry-After must be finite and not negative")
        if self.hidden_limit is not None and self.hidden_limit < 1:
            raise ValueError("the hidden concurrency limit must be at least 1")

    @property
    def mean_latency_s(self) -> float:
        """The expected latency of a good reply (what the ideal bound assumes)."""
        return self.latency_s
