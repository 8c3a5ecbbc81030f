"""Defaults shared by the endpoint factory, the wrappers and the backend, kept apart from
the backend so that naming a model does not import the `openai` SDK (about a second)."""

DEFAULT_TIMEOUT_S = 60.0  # one HTTP request; a whole call gets three of these by default
DEFAULT_CONCURRENCY = 8  # calls in flight per endpoint when neither profile nor run says
DEFAULT_MAX_RETRY_AFTER_S = 60.0  # the longest Retry-After a call waits out


def calls_in_flight(own: int | None, run: int | None) -> int:
    """An endpoint's limit: its profile's own, else the run's concurrency, else the
    default; the connection pool is sized by the same number."""
    return own or run or DEFAULT_CONCURRENCY
