"""What a model name resolves to: a backend with its prices and limits."""

from __future__ import annotations

from dataclasses import dataclass

from disputelab.llm.base import ChatModel
from disputelab.llm.openai_defaults import (
    DEFAULT_MAX_RETRY_AFTER_S,
    DEFAULT_TIMEOUT_S,
    calls_in_flight,
)
from disputelab.llm.wrappers import Prices


@dataclass
class Endpoint:
    """A backend, what its calls cost, and the limits its calls are held to."""

    backend: ChatModel
    prices: Prices
    concurrency: int | None  # None: whatever the run's concurrency is
    rpm: float | None
    timeout_s: float = DEFAULT_TIMEOUT_S
    deadline_s: float | None = None
    max_retry_after_s: float = DEFAULT_MAX_RETRY_AFTER_S
    adaptive: bool = False
    # The backend bounds each call itself, from when the call starts running rather than
    # from when it joined the queue for the endpoint (the embedded model's calls queue).
    bounds_own_calls: bool = False

    def limit(self, run_concurrency: int | None) -> int:
        """Calls in flight: the profile's own limit, else the run's concurrency, so that
        `concurrency: 64` in a spec reaches the endpoint."""
        return calls_in_flight(self.concurrency, run_concurrency)

    def caps(self, run_concurrency: int | None) -> bool:
        """Whether a profile's limit holds the run below its own concurrency."""
        return bool(run_concurrency and self.limit(run_concurrency) < run_concurrency)

    @property
    def call_deadline_s(self) -> float | None:
        """A whole call, retries and waits included: three timeouts unless set; None
        when the backend bounds its own calls."""
        if self.bounds_own_calls:
            return None
        return self.deadline_s if self.deadline_s is not None else 3 * self.timeout_s
