"""Cross-cutting concerns as thin `ChatModel` wrappers: limits, retries, metering (the
response cache is in `disputelab.llm.cache`)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import TypeVar

from disputelab.llm.base import (
    ChatModel,
    ChatRequest,
    ChatResponse,
    Deadline,
    TransientModelError,
    token_count,
)
from disputelab.llm.openai_defaults import DEFAULT_CONCURRENCY, DEFAULT_MAX_RETRY_AFTER_S

Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")


# How far an overload cuts the adaptive limit. TCP Reno halves; CUBIC keeps 0.7, which
# measured here (benchmarks/bench_adaptive_limit.py) loses less throughput in the sawtooth
# below a provider's hidden limit for about as few refusals.
BACKOFF = 0.7
# The share of a window's calls that may be refused before the limit is cut. A provider
# that refuses a call in a hundred at random is not full, but at 64 calls in flight half
# of all windows held such a refusal, and cutting for each held the run near 18 calls in
# flight (as loss does TCP): 429s on 1 % of calls made a run 8 times slower. Past its
# hidden limit a provider refuses every call beyond it, each again on its retry: far
# more than this share. Below 1 / TOLERANCE calls in flight, any refusal is more.
TOLERANCE = 0.05


@dataclass
class AdaptiveLimit:
    """The in-flight limit's arithmetic, apart from the calls it admits.

    Additive increase: each success adds 1 / limit, about one call per round trip.
    Multiplicative decrease: the limit is cut to BACKOFF of itself when more than
    TOLERANCE of a window's calls report an overload. A window is a limit's worth of
    outcomes, about one round trip; a cut starts a new one. Calls admitted before the
    last cut were sent under a higher limit and their overloads have been answered: they
    are not counted (as TCP cuts once per window of packets in flight).
    """

    ceiling: int
    limit: float = field(init=False)  # starts at the ceiling
    tolerance: float = TOLERANCE
    cuts: int = 0  # how many times the limit was cut; calls note it on admission
    seen: int = 0  # outcomes in the current window
    overloads: int = 0  # overloads among them

    def __post_init__(self) -> None:
        self.limit = float(self.ceiling)

    def on_overload(self, admitted_after: int) -> bool:
        """Count an overload reported by a call admitted after `admitted_after` cuts;
        whether the limit was cut for it."""
        if admitted_after != self.cuts:
            return False
        self.overloads += 1
        if self.overloads > self.tolerance * self.limit:
            self.limit = max(1.0, self.limit * BACKOFF)
            self.cuts += 1
            self.seen = self.overloads = 0
            return True
        self._count()
        return False

    def on_success(self) -> None:
        self.limit = min(float(self.ceiling), self.limit + 1 / self.limit)
        self._count()

    def _count(self) -> None:
        self.seen += 1
        if self.seen >= self.limit:  # a round trip's worth: the next window begins
            self.seen = self.overloads = 0


class Limited:
    """At most `concurrency` calls in flight and `rpm` call starts per minute.

    `adaptive` makes the in-flight limit find the provider's own (`AdaptiveLimit`): it is
    cut to 0.7 of itself when more than a few of a round trip's calls report an overload
    (a 429, a timeout) and grows by one call per round trip of successes, between 1 and
    `concurrency`. A run then stays near a provider's hidden limit without hand tuning,
    and a provider that refuses the odd call at random does not hold it far below.
    """

    def __init__(
        self,
        inner: ChatModel,
        concurrency: int = DEFAULT_CONCURRENCY,
        rpm: float | None = None,
        adaptive: bool = False,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.ceiling = concurrency
        self.adaptive = adaptive
        self.control = AdaptiveLimit(concurrency)
        self.in_flight = 0
        self.slots = asyncio.Condition()
        self.interval = 60.0 / rpm if rpm else 0.0
        self.next_start = 0.0
        self.lock = asyncio.Lock()

    @property
    def limit(self) -> float:
        return self.control.limit

    async def _pace(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            wait = self.next_start - now
            self.next_start = max(now, self.next_start) + self.interval
        if wait > 0:
            await asyncio.sleep(wait)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self.run(lambda: self.inner.complete(request))

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call` under this endpoint's limits: its embeddings requests share them with
        its chat calls."""
        async with self.slots:
            await self.slots.wait_for(lambda: self.in_flight < max(1, int(self.limit)))
            self.in_flight += 1
            admitted_after = self.control.cuts
        try:
            await self._pace()
            response = await call()
        except TransientModelError as exc:
            if self.adaptive and exc.overload:
                self.control.on_overload(admitted_after)
            raise
        finally:
            async with self.slots:
                self.in_flight -= 1
                self.slots.notify_all()
        if self.adaptive:
            self.control.on_success()
        return response


class Retrying:
    """Retry transient failures with capped exponential backoff and full jitter.

    A server's `Retry-After` wins over the backoff, up to `max_retry_after_s`: a server
    that asks for longer fails the call at once with that reason (the episode fails and
    `--resume` retries it later) rather than parking the run. Attempts are bounded, and
    so is the whole call, retries and waits included, by `deadline_s`. The last failure
    is re-raised. The response records how many retries it took.
    """

    def __init__(
        self,
        inner: ChatModel,
        attempts: int = 6,
        base_s: float = 0.5,
        cap_s: float = 30.0,
        max_retry_after_s: float = DEFAULT_MAX_RETRY_AFTER_S,
        deadline_s: float | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.attempts = attempts
        self.base_s = base_s
        self.cap_s = cap_s
        self.max_retry_after_s = max_retry_after_s
        self.deadline_s = deadline_s
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.retries = 0  # over the wrapper's lifetime, for reporting

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        return self.rng.uniform(0, min(self.cap_s, self.base_s * 2**attempt))

    async def complete(self, request: ChatRequest) -> ChatResponse:
        deadline = self.deadline()
        response, retries = await self.run(lambda: self.inner.complete(request), deadline)
        response.retries = retries
        # Reading the reply (repairing it above all) is part of the call: the structured
        # layer holds it to what is left.
        response.deadline = deadline
        return response

    def deadline(self) -> Deadline | None:
        """The deadline of a call starting now."""
        if self.deadline_s is None:
            return None
        return Deadline(time.monotonic() + self.deadline_s, self.deadline_s)

    async def run(
        self, call: Callable[[], Awaitable[T]], deadline: Deadline | None = None
    ) -> tuple[T, int]:
        """`call`'s result and the retries it took, retried as a chat call is (an
        endpoint's embeddings requests come through here too), all within `deadline`
        (unset: one starting now)."""
        deadline = deadline or self.deadline()
        end = None if deadline is None else deadline.at
        for attempt in range(self.attempts):
            try:
                result = await self._attempt(call, end)
            except TransientModelError as exc:
                wait = self.delay(attempt, exc.retry_after)
                self._give_up_if_hopeless(exc, attempt, wait, end)
                self.retries += 1
                await self.sleep(wait)
                continue
            return result, attempt
        raise AssertionError("unreachable")  # pragma: no cover

    async def _attempt(self, call: Callable[[], Awaitable[T]], end: float | None) -> T:
        if end is None:
            return await call()
        try:
            async with asyncio.timeout(max(0.0, end - time.monotonic())):
                return await call()
        except TimeoutError:
            raise TransientModelError(
                f"{self.name}: no reply within the call's {self.deadline_s:g} s deadline"
            ) from None

    def _give_up_if_hopeless(
        self, exc: TransientModelError, attempt: int, wait: float, end: float | None
    ) -> None:
        """Re-raise `exc`, saying why, when no further attempt can help."""
        if exc.retry_after is not None and exc.retry_after > self.max_retry_after_s:
            raise TransientModelError(
                f"{exc} (the server asked to wait {exc.retry_after:g} s, more than the "
                f"{self.max_retry_after_s:g} s this run waits; retry later)",
                exc.retry_after,
            ) from None
        if attempt == self.attempts - 1:
            raise TransientModelError(
                f"{exc} (gave up after {self.attempts} attempts)", exc.retry_after
            ) from None
        if end is not None and time.monotonic() + wait >= end:
            raise TransientModelError(
                f"{exc} (gave up: the call's {self.deadline_s:g} s deadline would pass "
                "before the next attempt)",
                exc.retry_after,
            ) from None


@dataclass
class Prices:
    """US dollars per million tokens; None means unknown (and is reported so, never 0)."""

    input_per_m: float | None = None
    output_per_m: float | None = None

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float | None:
        if input_tokens == 0 and output_tokens == 0:
            return 0.0  # nothing was sent: free at any price, known or not
        if self.input_per_m is None or self.output_per_m is None:
            return None
        if input_tokens is None or output_tokens is None:
            return None
        return (input_tokens * self.input_per_m + output_tokens * self.output_per_m) / 1e6


@dataclass
class RoleUsage:
    """What one role (parties, mediator, judge) spent. Cache hits are not model calls."""

    model: str
    calls: int = 0
    cached: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    tokens_unknown: int = 0  # calls whose reply carried no token counts, or unusable ones
    tokens_unknown_reason: str | None = None  # why, for the first such call

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class Ledger:
    """Usage per role, filled by `Metered` wrappers, and per role and model: on a model
    axis one role calls several models, and each one's share is reported on its own."""

    roles: dict[str, RoleUsage] = field(default_factory=dict)
    by_model: dict[tuple[str, str], RoleUsage] = field(default_factory=dict)

    def role(self, role: str, model: str) -> RoleUsage:
        if role not in self.roles:
            self.roles[role] = RoleUsage(model)
        return self.roles[role]

    def role_model(self, role: str, model: str) -> RoleUsage:
        """The part of `role`'s usage that `model` spent."""
        return self.by_model.setdefault((role, model), RoleUsage(model))

    def models_of(self, role: str) -> list[RoleUsage]:
        """Each model's part of `role`'s usage, in the order they were first called."""
        return [u for (r, _), u in self.by_model.items() if r == role]

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.roles.values())


class Metered:
    """Count calls, tokens and cost for one role; tokens come from the response."""

    def __init__(self, inner: ChatModel, ledger: Ledger, role: str, prices: Prices) -> None:
        self.inner = inner
        self.name = inner.name
        self.usage = ledger.role(role, inner.name)
        self.part = ledger.role_model(role, inner.name)
        self.prices = prices

    async def complete(self, request: ChatRequest) -> ChatResponse:
        response = await self.inner.complete(request)
        for u in (self.usage, self.part):
            self._count(u, response)
        return response

    def _count(self, u: RoleUsage, response: ChatResponse) -> None:
        if response.cached:
            u.cached += 1
            return
        u.calls += 1
        u.retries += response.retries
        # Checked again here: a backend other than the OpenAI-compatible one may pass on
        # whatever its server said.
        tokens_in, why_in = token_count("prompt_tokens", response.input_tokens)
        tokens_out, why_out = token_count("completion_tokens", response.output_tokens)
        if tokens_in is None or tokens_out is None:
            u.tokens_unknown += 1
            u.cost_usd = None
            u.tokens_unknown_reason = u.tokens_unknown_reason or str(
                response.extra.get("usage_unknown") or why_in or why_out
            )
            return
        u.input_tokens += tokens_in
        u.output_tokens += tokens_out
        cost = self.prices.cost(tokens_in, tokens_out)
        u.cost_usd = None if cost is None or u.cost_usd is None else u.cost_usd + cost
