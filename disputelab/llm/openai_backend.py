"""Any OpenAI-compatible chat endpoint, through the official `openai` SDK.

One backend covers the OpenAI API, vLLM, the llama.cpp server, Ollama, DeepSeek,
OpenRouter and the rest. The SDK's own retries are switched off: retrying is the
`Retrying` wrapper's job, so every retry is counted in one place.
"""

from __future__ import annotations

import os
import time
from typing import Any

import openai

from disputelab.llm.base import (
    ChatRequest,
    ChatResponse,
    ModelError,
    TransientModelError,
)


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date; fall back to backoff


class OpenAICompatible:
    """Chat completions against `base_url`; the API key is read from `api_key_env`."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout_s: float = 120.0,
        json_schema: bool = True,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.name = f"openai:{model}" + (f"@{base_url}" if base_url else "")
        key = os.environ.get(api_key_env, "") if api_key_env else ""
        # Local servers need no key, but the SDK insists on one being set.
        self.client = openai.AsyncOpenAI(
            api_key=key or "no-key", base_url=base_url, max_retries=0, timeout=timeout_s
        )
        self.json_schema = json_schema

    def _format(self, request: ChatRequest) -> dict[str, Any] | None:
        if request.schema is None:
            return None
        if self.json_schema:
            return {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.schema},
            }
        return {"type": "json_object"}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.seed is not None:
            kwargs["seed"] = request.seed
        fmt = self._format(request)
        if fmt is not None:
            kwargs["response_format"] = fmt
        t0 = time.perf_counter()
        try:
            reply = await self.client.chat.completions.create(**kwargs)
        except openai.BadRequestError as exc:
            if fmt is not None and self.json_schema and "response_format" in str(exc):
                # The server does not take JSON schemas: ask for plain JSON from now on,
                # and let the structured-output layer parse and check it.
                self.json_schema = False
                return await self.complete(request)
            raise ModelError(f"{self.name}: bad request ({exc.status_code})") from None
        except openai.RateLimitError as exc:
            raise TransientModelError(
                f"{self.name}: rate limited (429)", _retry_after(exc)
            ) from None
        except openai.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code in (408, 409):
                raise TransientModelError(
                    f"{self.name}: server error {exc.status_code}", _retry_after(exc)
                ) from None
            raise ModelError(f"{self.name}: request refused ({exc.status_code})") from None
        except openai.APITimeoutError:
            raise TransientModelError(f"{self.name}: timed out") from None
        except openai.APIConnectionError:
            raise TransientModelError(f"{self.name}: cannot connect") from None
        if not reply.choices:
            raise TransientModelError(f"{self.name}: reply had no choices")
        text = reply.choices[0].message.content or ""
        usage = reply.usage
        return ChatResponse(
            text=text,
            model=self.name,
            input_tokens=usage.prompt_tokens if usage else None,
            output_tokens=usage.completion_tokens if usage else None,
            latency_s=time.perf_counter() - t0,
        )
