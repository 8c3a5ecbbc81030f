"""The model interface: one async call from a request to a response.

Every cross-cutting concern (limits, retries, caching, metering, structured output) is a
thin wrapper that is itself a `ChatModel`, so they stack in any order and a backend only
has to turn one request into one response.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from disputelab.errors import DisputelabError

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """What to ask. `sample` tells repeated samples of the same prompt apart, so that at
    temperature > 0 they stay distinct in the cache yet each replays exactly."""

    messages: tuple[Message, ...]
    temperature: float = 0.0
    max_tokens: int = 512
    schema: dict[str, Any] | None = None  # JSON schema the reply must satisfy
    schema_name: str = "reply"
    sample: int = 0
    seed: int | None = None

    def with_messages(self, messages: tuple[Message, ...]) -> ChatRequest:
        return ChatRequest(
            messages,
            self.temperature,
            self.max_tokens,
            self.schema,
            self.schema_name,
            self.sample,
            self.seed,
        )


@dataclass(frozen=True, slots=True)
class Deadline:
    """When a call must be over: `at` on the monotonic clock, `seconds` as it was set
    (for messages). Reading its reply counts against it too."""

    at: float
    seconds: float

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())


@dataclass(slots=True)
class ChatResponse:
    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached: bool = False
    latency_s: float = 0.0
    retries: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    # The deadline of the call that fetched it, which parsing the reply counts against
    # (None: the call had none, or the reply came from the cache). Never stored.
    deadline: Deadline | None = None


@runtime_checkable
class ChatModel(Protocol):
    """Anything that answers a chat request: a backend or a wrapper around one."""

    name: str

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


# The most tokens one call is believed to carry. No model reads or writes two billion
# tokens in one call, and so bounded, any total over a run (up to 2**32 calls) stays
# within SQLite's 64-bit integers, where the store and the cache keep them.
MAX_TOKEN_COUNT = 2**31 - 1


def token_count(name: str, value: Any) -> tuple[int | None, str | None]:
    """A token count as a reply gives it, checked: a whole number from 0 to
    `MAX_TOKEN_COUNT`, else unknown (None) with the reason why."""
    if value is None:
        return None, f"the reply gave no {name}"
    if not isinstance(value, int) or isinstance(value, bool):
        return None, f"{name} was not a whole number ({str(value)[:40]!r})"
    if not 0 <= value <= MAX_TOKEN_COUNT:
        shown = str(value) if abs(value) < 10**15 else f"about 10^{len(str(abs(value))) - 1}"
        return None, f"{name} {shown} is outside 0..{MAX_TOKEN_COUNT}"
    return value, None


class ModelError(DisputelabError):
    """A model call failed in a way retrying will not fix (bad request, auth, missing model)."""


class TransientModelError(ModelError):
    """A failure worth retrying: rate limit, server error, timeout, dropped connection."""

    def __init__(
        self, message: str, retry_after: float | None = None, overload: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        # The provider is over its capacity (429, a timeout): fewer calls at once helps,
        # where it would not help a 500 or a broken body.
        self.overload = overload


class ModelReplyError(ModelError):
    """The model kept replying with something that does not fit the expected structure.

    `responses` holds the replies that did not fit: they were still calls, and whoever
    recovers from the error charges their usage."""

    def __init__(self, message: str, responses: Sequence[ChatResponse] = ()) -> None:
        super().__init__(message)
        self.responses = list(responses)


class TruncatedReplyError(ModelReplyError):
    """The model's reply was cut off at its token limit, again after a re-ask with more
    room: recorded as truncated with this reason, never repaired into a valid answer."""
